import { mcpServer } from "../client/mcp-server.js";
import { call } from "../client/test-helpers.js";

/**
 * A client in a process of its own, for H18: `node --max-old-space-size=512 --import tsx
 * flood-client.ts <url> <tool>` calls the fault server's `<tool>` once and prints one JSON
 * line: whether the result is an error, its text (cut), the time the call took and the
 * process's peak resident memory. A client that buffers without end dies of "heap out of
 * memory" instead.
 */
const [url, toolName] = process.argv.slice(2);
const source = mcpServer({ name: "web", url: url as string, onWarning: () => {} });
const tools = await source.tools();
const started = performance.now();
const result = await call(tools, `web__${toolName}`, {});
const elapsedMs = Math.round(performance.now() - started);
process.stdout.write(
  `${JSON.stringify({
    isError: result.isError,
    text: result.text.slice(0, 1_000),
    elapsedMs,
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  })}\n`,
);
await source.close();
process.exit(0);
