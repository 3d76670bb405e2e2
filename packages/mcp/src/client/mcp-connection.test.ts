import { ReadBuffer } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { STDIO_MESSAGE_TOO_LARGE } from "./mcp-connection.js";

describe("what the connection reads of the MCP SDK (H22)", () => {
  it("H22: the SDK reports a stdio message over its buffer in the words STDIO_MESSAGE_TOO_LARGE reads", () => {
    // If a new SDK version words it otherwise, an oversize message is reported as an exit code again.
    expect(STDIO_MESSAGE_TOO_LARGE).toBeInstanceOf(RegExp);
    const buffer = new ReadBuffer({ maxBufferSize: 16 });
    expect(() => buffer.append(Buffer.alloc(17, 97))).toThrow(STDIO_MESSAGE_TOO_LARGE);
  });
});
