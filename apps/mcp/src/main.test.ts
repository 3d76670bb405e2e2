import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const cwd = fileURLToPath(new URL("..", import.meta.url));

async function run(script: string): Promise<string> {
  const env = { ...process.env };
  delete env.DEEPSEEK_API_KEY;
  delete env.ANTHROPIC_API_KEY;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--conditions=@lattice/source", "--import", "tsx", script],
    { cwd, env, timeout: 60_000 },
  );
  return stdout;
}

describe("the MCP sample app", () => {
  it("script 1: an agent calls server-everything's tools over stdio next to its own, offline", async () => {
    const stdout = await run("src/agent-main.ts");
    expect(stdout.split("\n")[0]).toMatch(/^MCP agent: offline/);
    expect(stdout).toContain(
      "tools: countWords, everything__echo, everything__get-structured-content, everything__get-sum",
    );
    expect(stdout).toContain("plan: [everything__echo ‖ everything__get-sum ‖ countWords]");
    expect(stdout).toContain("← everything__echo: Echo: hello from Lattice");
    expect(stdout).toContain("← everything__get-sum: The sum of 19 and 23 is 42.");
    expect(stdout).toContain("← countWords: 6");
    expect(stdout).toContain('"conditions":"Light rain / drizzle"');
    expect(stdout).toMatch(/result \(success, 3 turns\): The server echoed the greeting/);
  });

  it("script 2: the quickstart's tools served over MCP, listed and called by the official client", async () => {
    const stdout = await run("src/serve-main.ts");
    expect(stdout).toMatch(
      /^serving calculator, search, incrementRevision, notifyTeam, finish at http:\/\/127\.0\.0\.1:\d+\/mcp/,
    );
    expect(stdout).toContain("search(query)  readOnlyHint: Search documents");
    expect(stdout).toContain("calculator(a, op, b): Apply an arithmetic operator to two numbers");
    expect(stdout).toContain("calculator 12 * 8 → ✓ 96");
    expect(stdout).toContain('calculator 2 ** 10 → ✗ isError: Invalid input for tool "calculator"');
    expect(stdout).toContain("✓ Regions: data is stored in Frankfurt and Dublin.");
    expect(stdout).toContain('structuredContent: {"seats":8,"total":96,"currency":"EUR"}');
    expect(stdout).toContain("server closed");
    const elapsed = Number(/3 × search at once, (\d+) ms/.exec(stdout)?.[1]);
    expect(elapsed).toBeLessThan(850);
  });
});
