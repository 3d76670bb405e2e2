import type { ToolResultContentBlock } from "@lattice/tools";
import type { ContentBlock } from "@modelcontextprotocol/server";

/**
 * Lattice result blocks as MCP content: text as `text`, a base64 image as `image`
 * (`data` + `mimeType`), an image by URL as a `resource_link` to it (MCP images carry their
 * bytes).
 *
 * @param blocks - A normalised tool result's content.
 */
export function toMcpContent(blocks: readonly ToolResultContentBlock[]): ContentBlock[] {
  return blocks.map((block): ContentBlock => {
    if (block.type === "text") return { type: "text", text: block.text };
    if (block.source.type === "base64") {
      return { type: "image", data: block.source.data, mimeType: block.source.media_type };
    }
    return { type: "resource_link", uri: block.source.url, name: "image" };
  });
}
