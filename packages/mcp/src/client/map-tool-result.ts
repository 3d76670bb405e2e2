import type { ToolHandlerResult, ToolResultContentBlock } from "@lattice/tools";

/** The image types the model APIs accept inline; others become text that names them. */
const MODEL_IMAGE_TYPES: ReadonlySet<string> = new Set([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
]);

/**
 * An MCP `tools/call` result as the SDK returns it, read loosely: servers send content types
 * this SDK version does not know, and a result from a 2024 server may carry `toolResult`
 * instead of `content`.
 */
interface LooseCallToolResult {
  readonly content?: unknown;
  readonly structuredContent?: unknown;
  readonly isError?: unknown;
  readonly toolResult?: unknown;
}

/**
 * Maps an MCP tool result to what a Lattice handler returns (M7): text and images become
 * blocks; audio, resource links and embedded resources become text naming their URI and MIME
 * type (embedded text resources keep their text); `structuredContent` becomes JSON text when
 * there is no other content and is kept as the result's `structuredContent` (for hooks and the
 * caller, never sent to the model); `isError: true` stays an error.
 *
 * @param result - The result the server sent.
 */
export function mapToolResult(result: LooseCallToolResult): ToolHandlerResult {
  const blocks: ToolResultContentBlock[] = [];
  const content = Array.isArray(result.content) ? result.content : [];
  for (const item of content) blocks.push(mapContent(item));
  if (content.length === 0 && result.toolResult !== undefined) {
    blocks.push({ type: "text", text: jsonText(result.toolResult) });
  }
  const structured = result.structuredContent;
  if (blocks.length === 0 && structured !== undefined) {
    blocks.push({ type: "text", text: jsonText(structured) });
  }
  return {
    content: blocks,
    ...(result.isError === true ? { isError: true } : {}),
    ...(structured !== undefined ? { structuredContent: structured } : {}),
  };
}

function mapContent(item: unknown): ToolResultContentBlock {
  const block = (item ?? {}) as Record<string, unknown>;
  const type = block.type;
  const mimeType = typeof block.mimeType === "string" ? block.mimeType : undefined;
  switch (type) {
    case "text":
      return { type: "text", text: typeof block.text === "string" ? block.text : "" };
    case "image": {
      if (
        mimeType !== undefined &&
        MODEL_IMAGE_TYPES.has(mimeType) &&
        typeof block.data === "string"
      ) {
        return {
          type: "image",
          source: { type: "base64", media_type: mimeType, data: block.data },
        };
      }
      return text(
        `[image (${mimeType ?? "unknown type"}) not shown: the model APIs take PNG, JPEG, GIF and WebP images]`,
      );
    }
    case "audio":
      return text(
        `[audio (${mimeType ?? "unknown type"}, ${base64Bytes(block.data)} bytes) not shown: the model cannot hear it]`,
      );
    case "resource_link": {
      const name = typeof block.name === "string" ? `${block.name} ` : "";
      const description =
        typeof block.description === "string" && block.description !== ""
          ? `: ${block.description}`
          : "";
      return text(
        `[resource link ${name}<${String(block.uri)}> (${mimeType ?? "unknown type"})${description}]`,
      );
    }
    case "resource": {
      const resource = (block.resource ?? {}) as Record<string, unknown>;
      const uri = String(resource.uri);
      const type = typeof resource.mimeType === "string" ? resource.mimeType : "unknown type";
      if (typeof resource.text === "string") {
        return text(`[resource <${uri}> (${type})]\n${resource.text}`);
      }
      return text(
        `[resource <${uri}> (${type}, ${base64Bytes(resource.blob)} bytes of binary data) not shown]`,
      );
    }
    default:
      return text(
        `[content of type ${JSON.stringify(type)} not shown: this client does not know it]`,
      );
  }
}

function text(value: string): ToolResultContentBlock {
  return { type: "text", text: value };
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** How many bytes a base64 string holds, without decoding it. */
function base64Bytes(data: unknown): number {
  if (typeof data !== "string") return 0;
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
