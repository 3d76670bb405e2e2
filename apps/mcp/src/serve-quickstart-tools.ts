import { serveMcp } from "@lattice/mcp";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
// The quickstart's own tools file, imported as it is: nothing in it knows about MCP.
import {
  calculator,
  finish,
  incrementRevision,
  notifyTeam,
  search,
} from "../../quickstart/src/tools.js";

/** Where the script prints; `console.log` by default, a collector in tests. */
export type Print = (line: string) => void;

type CallResult = Awaited<ReturnType<Client["callTool"]>>;

function describe(result: CallResult): string {
  const text = (result.content as { type: string; text?: string }[])
    .map((block) => (block.type === "text" ? block.text : `[${block.type}]`))
    .join(" ")
    .replaceAll("\n", " | ");
  const structured =
    result.structuredContent === undefined
      ? ""
      : `  structuredContent: ${JSON.stringify(result.structuredContent)}`;
  return `${result.isError ? "✗ isError: " : "✓ "}${text}${structured}`;
}

/**
 * Script 2: serves the quickstart's tools over Streamable HTTP with `serveMcp`, then plays an
 * MCP client (the official SDK's `Client`, as Claude Desktop or an IDE would be) that lists
 * and calls them. No model is involved. Returns whether every expectation held.
 */
export async function serveQuickstartTools(
  print: Print = (line) => console.log(line),
): Promise<boolean> {
  const server = await serveMcp(
    {
      name: "quickstart-tools",
      version: "1.0.0",
      tools: [calculator, search, incrementRevision, notifyTeam, finish],
    },
    { transport: "http", port: 0 },
  );
  print(`serving ${server.toolNames.join(", ")} at ${server.url}`);

  const client = new Client({ name: "sample-client", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  let ok = true;
  try {
    const { tools } = await client.listTools();
    print("\ntools/list:");
    for (const listed of tools) {
      const fields = Object.keys(listed.inputSchema.properties ?? {}).join(", ");
      const hint = listed.annotations?.readOnlyHint ? "  readOnlyHint" : "";
      print(`  ${listed.name}(${fields})${hint}: ${listed.description}`);
    }

    print("\ntools/call:");
    const product = await client.callTool({
      name: "calculator",
      arguments: { a: 12, op: "*", b: 8 },
    });
    print(`  calculator 12 * 8 → ${describe(product)}`);
    const invalid = await client.callTool({
      name: "calculator",
      arguments: { a: 2, op: "**", b: 10 },
    });
    print(`  calculator 2 ** 10 → ${describe(invalid)}`);

    const started = Date.now();
    const found = await Promise.all(
      ["pricing", "limits", "regions"].map((query) =>
        client.callTool({ name: "search", arguments: { query } }),
      ),
    );
    print(`  3 × search at once, ${Date.now() - started} ms (each takes 300 ms):`);
    for (const result of found) print(`    ${describe(result)}`);

    const revised = await client.callTool({ name: "incrementRevision", arguments: {} });
    print(`  incrementRevision → ${describe(revised)}`);
    const done = await client.callTool({
      name: "finish",
      arguments: { answer: "8 seats cost 96 EUR per month.", seats: 8, total: 96 },
    });
    print(`  finish → ${describe(done)}`);
    ok = !product.isError && invalid.isError === true && done.structuredContent !== undefined;
  } finally {
    await client.close();
    await server.close();
  }
  print("\nserver closed");
  return ok;
}
