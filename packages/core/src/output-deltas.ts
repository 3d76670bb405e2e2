import type { ModelStreamEvent } from "@lattice/providers";
import { parse as parsePartialJson } from "partial-json";
import type { RunEnv } from "./run-env.js";
import { OUTPUT_TOOL_NAME } from "./run-output.js";

/**
 * Follows one streamed call's typed answer and emits `output_delta` messages (L4): the text
 * deltas of a native call (its text is the JSON), or the input deltas of the `final_answer`
 * call of a forced-tool call. Internal.
 */
export class OutputDeltas {
  readonly #env: RunEnv;
  readonly #native: boolean;
  #text = "";
  /** The block index of the final_answer call, once it started. */
  #toolIndex: number | undefined;

  constructor(env: RunEnv, mode: "native_json_schema" | "forced_tool") {
    this.#env = env;
    this.#native = mode === "native_json_schema";
  }

  on(event: ModelStreamEvent): void {
    if (event.type === "block_start") {
      if (event.block.type === "tool_use" && event.block.name === OUTPUT_TOOL_NAME) {
        this.#toolIndex = event.index;
        this.#text = "";
      }
      return;
    }
    let piece: string;
    if (event.type === "text_delta" && this.#native) piece = event.text;
    else if (event.type === "tool_input_delta" && event.index === this.#toolIndex) {
      piece = event.partialJson;
    } else return;
    if (piece === "") return;
    this.#text += piece;
    const env = this.#env;
    const text = this.#text;
    // Parsed when read, once: parsing the whole text at every delta would cost time that grows
    // with the square of the answer's length, for consumers that only want the text.
    let partial: { value: unknown } | undefined;
    env.placement.emit({
      type: "output_delta",
      text,
      get partial() {
        partial ??= { value: partialValue(text) };
        return partial.value;
      },
      sessionId: env.sessionId,
      runId: env.runId,
      parentToolUseId: env.placement.parentToolUseId,
    });
  }
}

/** What JSON text so far parses to, best effort; `undefined` while nothing does. */
function partialValue(text: string): unknown {
  const start = text.indexOf("{");
  if (start === -1) return undefined;
  try {
    return parsePartialJson(text.slice(start));
  } catch {
    return undefined;
  }
}
