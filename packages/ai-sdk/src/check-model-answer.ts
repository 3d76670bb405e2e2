import type { SharedV3Headers } from "@ai-sdk/provider";
import { ProviderError } from "@lattice/providers";
import { describeValue } from "@lattice/tools/internal";
import type { AiSdkStreamPart } from "./ai-sdk-stream-assembler.js";
import type { BridgeContext } from "./bridge-context.js";
import type { GenerateResult } from "./decode-generate-result.js";

/** A check of one field: what it must be, for the message, and the test. */
type FieldRule = readonly [field: string, expected: string, test: (value: unknown) => boolean];

const isString = (value: unknown): boolean => typeof value === "string";
const isObject = (value: unknown): boolean => value !== null && typeof value === "object";
const STRING = "a string";
const ID: FieldRule = ["id", STRING, isString];
const DELTA: FieldRule = ["delta", STRING, isString];
const TOOL_CALL: readonly FieldRule[] = [
  ["toolCallId", STRING, isString],
  ["toolName", STRING, isString],
];
const FILE: readonly FieldRule[] = [
  ["mediaType", STRING, isString],
  [
    "data",
    "base64 text or a Uint8Array",
    (value) => isString(value) || value instanceof Uint8Array,
  ],
];

/**
 * The fields the bridge reads from each stream part type it knows (V2 and V3 alike). Part
 * types it does not know are skipped, as parts added by newer specifications are.
 */
const STREAM_PART_FIELDS: ReadonlyMap<string, readonly FieldRule[]> = new Map([
  ["text-start", [ID]],
  ["text-delta", [ID, DELTA]],
  ["text-end", [ID]],
  ["reasoning-start", [ID]],
  ["reasoning-delta", [ID, DELTA]],
  ["reasoning-end", [ID]],
  ["tool-input-start", [ID, ["toolName", STRING, isString]]],
  ["tool-input-delta", [ID, DELTA]],
  ["tool-input-end", [ID]],
  ["tool-call", TOOL_CALL],
  ["tool-result", TOOL_CALL],
  ["file", FILE],
  [
    "finish",
    [
      ["finishReason", "a finish reason", (value) => isString(value) || isObject(value)],
      ["usage", "a usage object", isObject],
    ],
  ],
]);

/** The fields the bridge reads from each part of a `doGenerate` result's content. */
const CONTENT_PART_FIELDS: ReadonlyMap<string, readonly FieldRule[]> = new Map([
  ["text", [["text", STRING, isString]]],
  ["reasoning", [["text", STRING, isString]]],
  ["tool-call", TOOL_CALL],
  ["tool-result", TOOL_CALL],
  ["file", FILE],
]);

/** The stream result fields the bridge reads (V2 and V3 alike). */
export interface StreamResult {
  readonly stream: ReadableStream<AiSdkStreamPart>;
  readonly response?: { readonly headers?: SharedV3Headers };
}

/**
 * Checks what `doStream()` resolved to: an object whose `stream` is a `ReadableStream` (H27).
 *
 * @param result - What the model's `doStream()` resolved to.
 * @param context - The model, for the message.
 * @throws {@link ProviderError} `provider_malformed_response` naming the model and the field.
 */
export function checkStreamResult(result: unknown, context: BridgeContext): StreamResult {
  const stream = isObject(result) ? (result as { stream?: unknown }).stream : undefined;
  if (!isObject(stream) || typeof (stream as { getReader?: unknown }).getReader !== "function") {
    throw malformedAnswer(
      context,
      `answered doStream() with ${describeValue(result)}, whose "stream" is ${describeValue(stream)}, not a ReadableStream of stream parts`,
    );
  }
  return result as StreamResult;
}

/**
 * Checks one part of a model's stream before the bridge reads it (H27): an object with a string
 * `type` and, for the types the bridge reads, the fields it reads.
 *
 * @param part - The part as the stream gave it.
 * @param index - Its position in the stream, for the message.
 * @param context - The model, for the message.
 * @throws {@link ProviderError} `provider_malformed_response` naming the model, the part and
 *   the field.
 */
export function checkStreamPart(
  part: unknown,
  index: number,
  context: BridgeContext,
): AiSdkStreamPart {
  checkPart(part, `sent stream part ${index}`, STREAM_PART_FIELDS, context);
  return part as AiSdkStreamPart;
}

/**
 * Checks a `doGenerate()` result before the bridge reads it (H27): an object with a `content`
 * array of parts (each with the fields the bridge reads), a `finishReason` and a `usage`.
 *
 * @param result - What the model's `doGenerate()` resolved to.
 * @param context - The model, for the message.
 * @throws {@link ProviderError} `provider_malformed_response` naming the model and the field.
 */
export function checkGenerateResult(result: unknown, context: BridgeContext): GenerateResult {
  if (!isObject(result)) {
    throw malformedAnswer(
      context,
      `answered doGenerate() with ${describeValue(result)}, not a result object`,
    );
  }
  const fields = result as Partial<Record<"content" | "finishReason" | "usage", unknown>>;
  const missing = (field: string, expected: string, value: unknown): ProviderError =>
    malformedAnswer(
      context,
      `answered doGenerate() with a result whose "${field}" is ${describeValue(value)}, not ${expected}`,
    );
  if (!Array.isArray(fields.content)) {
    throw missing("content", "an array of parts", fields.content);
  }
  if (!isString(fields.finishReason) && !isObject(fields.finishReason)) {
    throw missing("finishReason", "a finish reason", fields.finishReason);
  }
  if (!isObject(fields.usage)) throw missing("usage", "a usage object", fields.usage);
  for (let index = 0; index < fields.content.length; index++) {
    checkPart(
      fields.content[index],
      `answered doGenerate() with content part ${index}`,
      CONTENT_PART_FIELDS,
      context,
    );
  }
  return result as GenerateResult;
}

function checkPart(
  part: unknown,
  where: string,
  rules: ReadonlyMap<string, readonly FieldRule[]>,
  context: BridgeContext,
): void {
  if (!isObject(part) || Array.isArray(part)) {
    throw malformedAnswer(
      context,
      `${where}, ${describeValue(part)}, which is not a part (an object with a string "type")`,
    );
  }
  const type = (part as { type?: unknown }).type;
  if (!isString(type)) {
    throw malformedAnswer(
      context,
      `${where}, whose "type" is ${describeValue(type)}, not a string`,
    );
  }
  for (const [field, expected, test] of rules.get(type as string) ?? []) {
    const value = (part as Record<string, unknown>)[field];
    if (!test(value)) {
      throw malformedAnswer(
        context,
        `${where}, a "${type}" part whose "${field}" is ${describeValue(value)}, not ${expected}`,
      );
    }
  }
}

/**
 * The JSON text of a `tool-call` part's input (H27): the text itself when the model sent text,
 * else the value as JSON, so that a tool call's input is plain JSON from here on (a value JSON
 * cannot take would fail the next request, or the session store, with a bare `TypeError`).
 *
 * @param input - The part's `input`.
 * @param where - Which part, for the message (`sent stream part 3`).
 * @param context - The model, for the message.
 * @throws {@link ProviderError} `provider_malformed_response` naming the model, the part and
 *   the field `input`, for a value `JSON.stringify` cannot take (a cycle, a `BigInt`, ...).
 */
export function toolCallInputText(input: unknown, where: string, context: BridgeContext): string {
  if (typeof input === "string") return input;
  try {
    return JSON.stringify(input ?? {}) ?? "{}";
  } catch (error) {
    throw malformedAnswer(
      context,
      `${where}, a "tool-call" part whose "input" is not JSON (${errorText(error)})`,
    );
  }
}

/**
 * The error for an answer that breaks the AI SDK's language model contract: a bug in the
 * provider package or a hand-made model object. Not retried: the same model answers alike.
 *
 * @param context - The model, for the message.
 * @param what - What the model answered, as the rest of a sentence after the model's label.
 */
export function malformedAnswer(context: BridgeContext, what: string): ProviderError {
  return new ProviderError({
    code: "provider_malformed_response",
    message: `${context.label} ${what}. The model object does not keep the AI SDK's language model contract (a bug in its provider package, or a hand-made model): the answer was not used. Update the provider package, or fix the model object.`,
    endpoint: context.endpoint,
    retryable: false,
  });
}

/** An error's message, cut short: the first line, at most 200 characters. */
function errorText(error: unknown): string {
  const text = (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
