import { mcpServer } from "../client/mcp-server.js";
import { faultServerCommand } from "./commands.js";

/**
 * A parent that connects to the fault server and ends without closing its source (M2's
 * "no orphan survives the parent"): prints the server's pid, then `process.exit(0)`, or
 * with the argument `kill` dies by SIGKILL (nothing of it runs after that).
 */
const source = mcpServer({ name: "fault", ...faultServerCommand(), onWarning: () => {} });
const stats = (await source.tools(new AbortController().signal)).find(
  (t) => t.name === "fault__stats",
);
const result = await stats?.handler(
  {},
  { signal: new AbortController().signal, toolUseId: "t", toolName: "fault__stats" },
);
const block = Array.isArray(result?.content) ? result.content[0] : undefined;
const pid = block?.type === "text" ? (JSON.parse(block.text) as { pid: number }).pid : undefined;
process.stdout.write(`server pid ${pid}\n`);
if (process.argv[2] === "kill") process.kill(process.pid, "SIGKILL");
else process.exit(0);
