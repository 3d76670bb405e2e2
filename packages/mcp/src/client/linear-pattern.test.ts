import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { faultServerCommand } from "../test-servers/commands.js";
import { compileLinearPattern } from "./linear-pattern.js";
import { type McpToolSource, mcpServer } from "./mcp-server.js";
import type { McpWarning } from "./mcp-server-options.js";
import { call, callTraced } from "./test-helpers.js";

describe("input schema patterns run in linear time (H19)", () => {
  const warnings: McpWarning[] = [];
  let source: McpToolSource;
  beforeAll(() => {
    source = mcpServer({
      name: "fault",
      ...faultServerCommand("hostile"),
      onWarning: (warning) => warnings.push(warning),
    });
  });
  afterAll(() => source.close());

  it('H19: pattern "^(a+)+$" with a 26-character input is answered at once, and the event loop keeps turning', async () => {
    const tools = await source.tools();
    // A timer due in 50 ms must fire on time while the input is checked.
    const due = performance.now() + 50;
    let lateBy = Number.POSITIVE_INFINITY;
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        lateBy = performance.now() - due;
        resolve();
      }, 50),
    );
    const started = performance.now();
    const result = await call(tools, "fault__redos", { text: `${"a".repeat(26)}!` });
    const elapsed = performance.now() - started;
    await timer;
    expect(result.isError).toBe(true);
    expect(result.text).toContain('must match pattern "^(a+)+$"');
    expect(elapsed).toBeLessThan(1_000);
    expect(lateBy).toBeLessThan(500);
    expect((await call(tools, "fault__redos", { text: "a".repeat(40) })).text).toBe(
      `redos:${JSON.stringify({ text: "a".repeat(40) })}`,
    );
  });

  it("H19: an outputSchema pattern is checked in linear time too", async () => {
    const tools = await source.tools();
    const started = performance.now();
    const result = await call(tools, "fault__redos_output", {});
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(result.isError).toBe(true);
    expect(result.text).toContain('text: must match pattern "^(a+)+$"');
  });

  it("H19: a pattern the engine cannot run leaves that property unchecked, with a warning and a note in the call's trace", async () => {
    const tools = await source.tools();
    expect(warnings).toContainEqual(
      expect.objectContaining({ code: "unchecked_pattern", toolName: "lookahead" }),
    );
    const warning = warnings.find((w) => w.toolName === "lookahead");
    expect(warning?.message).toBe(
      'Note: mcp server "fault": the input of the tool "lookahead" is not checked against the pattern "^(?=[A-Z])\\\\w+$" (lookarounds ((?=) are not supported): the linear-time engine does not run it. The rest of its inputSchema is checked, and the server checks its own input.',
    );
    const traced = await callTraced(tools, "fault__lookahead", { code: "lower" });
    expect(traced.text).toBe('lookahead:{"code":"lower"}');
    expect(traced.reports).toEqual([{ progress: 0, message: warning?.message }]);
    // The rest of the schema is still checked.
    const tooMany = await call(tools, "fault__lookahead", { code: "Abc", count: 9 });
    expect(tooMany.isError).toBe(true);
    expect(tooMany.text).toContain("count: must be <= 3");
  });

  it("H19: a patternProperties key the engine cannot run refuses nothing; the other keys are checked", async () => {
    const tools = await source.tools();
    expect(warnings).toContainEqual(
      expect.objectContaining({ code: "unchecked_pattern", toolName: "keyed" }),
    );
    expect((await call(tools, "fault__keyed", { xa: "text", other: 1, n_1: 2 })).isError).toBe(
      false,
    );
    const bad = await call(tools, "fault__keyed", { n_1: 1.5 });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain("n_1: must be integer");
  });

  it("H19: the note names at most three unchecked patterns, each quoted short, and reaches a run's trace once", async () => {
    const tools = await source.tools();
    const warning = warnings.find((w) => w.toolName === "lookaheads");
    expect(warning?.code).toBe("unchecked_pattern");
    const message = warning?.message ?? "";
    // It named all five, the 3,000-character one in full.
    expect(message.length).toBeLessThan(800);
    expect(message).toMatch(
      /^Note: mcp server "fault": the input of the tool "lookaheads" is not checked against 5 patterns: "\^\(\?=a\)" \(lookarounds \(\(\?=\) are not supported\), "\^\(\?=b\)" \(.*\), "\^\(\?=c\)" \(.*\) and 2 more: the linear-time engine does not run them\./,
    );
    const reports = [
      ...(await callTraced(tools, "fault__lookaheads", { a: "x" }, "run-1")).reports,
      ...(await callTraced(tools, "fault__lookaheads", { a: "x" }, "run-1")).reports,
      ...(await callTraced(tools, "fault__lookaheads", { a: "x" }, "run-2")).reports,
    ];
    expect(reports).toEqual([
      { progress: 0, message },
      { progress: 0, message },
    ]);
  });

  it("H19: a pattern RE2 refuses only when it compiles it is warned about and noted on the tool's first call", async () => {
    const tools = await source.tools();
    expect(warnings.some((w) => w.toolName === "late_unchecked")).toBe(false);
    const first = await callTraced(tools, "fault__late_unchecked", { word: "ωmega" }, "run-late");
    expect(first.text).toBe('late_unchecked:{"word":"ωmega"}');
    const late = warnings.filter((w) => w.toolName === "late_unchecked");
    expect(late).toHaveLength(1);
    expect(late[0]?.message).toMatch(
      /^Note: mcp server "fault": the input of the tool "late_unchecked" is not checked against the pattern "\^\\\\p\{Letter\}\+\$" \(.+\): the linear-time engine does not run it\./,
    );
    expect(first.reports).toEqual([{ progress: 0, message: late[0]?.message }]);
    // The rest of the schema is checked; the warning is not repeated.
    expect((await call(tools, "fault__late_unchecked", { word: "toolong" })).isError).toBe(true);
    expect(warnings.filter((w) => w.toolName === "late_unchecked")).toHaveLength(1);
  });

  it("H19: an outputSchema pattern the engine cannot run is warned about when the tools are listed", async () => {
    const tools = await source.tools();
    expect(warnings).toContainEqual({
      code: "unchecked_pattern",
      serverName: "fault",
      toolName: "lookahead_output",
      message:
        'Note: mcp server "fault": the structuredContent of the tool "lookahead_output" is not checked against the pattern "^(?=[A-Z])\\\\w+$" (lookarounds ((?=) are not supported): the linear-time engine does not run it. The rest of its outputSchema is checked, and the server is trusted for its output.',
    });
    // Left unchecked, the pattern refuses nothing.
    expect((await call(tools, "fault__lookahead_output", {})).text).toBe("lower");
  });

  it("H19: a pattern's . matches what JavaScript's matches: no line terminator", () => {
    for (const pattern of ["^.$", "^a.b$", "^[.]$", "^.+$"]) {
      const compiled = compileLinearPattern(pattern);
      expect(compiled.ok, pattern).toBe(true);
      if (!compiled.ok) continue;
      const native = new RegExp(pattern, "u");
      for (const input of ["\r", "\n", "\u2028", "\u2029", "a", ".", "a\rb", "😀", "a.b"]) {
        expect(compiled.test(input), `${pattern} on ${JSON.stringify(input)}`).toBe(
          native.test(input),
        );
      }
    }
  });

  it("H19: the linear engine accepts what the ECMA-262 pattern accepts", () => {
    const cases: [string, string[]][] = [
      ["^(a+)+$", ["aaa", "aaa!", ""]],
      ["^\\s*$", ["\u00a0", " \t", "\u2003", "x"]],
      ["^[\\s,]+$", ["\u00a0,", " ", "x"]],
      ["^\\S+$", ["abc", "a b", "a\u00a0b"]],
      ["^\\uD83D\\uDE00$", ["😀", "x"]],
      ["^\\u00e9\\u{1F600}$", ["é😀", "e"]],
      ["^[^]$", ["\n", "ab"]],
      ["^\\d{3}-\\d{4}$", ["555-1234", "55-1234"]],
      ["^(?<year>\\d{4})-(?<month>\\d{2})$", ["2024-01", "24-01"]],
      ["^[\\w.+-]+@[\\w-]+\\.[\\w.]+$", ["a.b+c@d-e.org", "nope"]],
      ["\\bcat\\b", ["a cat sat", "concatenate"]],
    ];
    for (const [pattern, inputs] of cases) {
      const compiled = compileLinearPattern(pattern);
      expect(compiled.ok, pattern).toBe(true);
      if (!compiled.ok) continue;
      const native = new RegExp(pattern, "u");
      for (const input of inputs) {
        expect(compiled.test(input), `${pattern} on ${JSON.stringify(input)}`).toBe(
          native.test(input),
        );
      }
    }
    expect(compileLinearPattern("[a-")).toMatchObject({ ok: false, invalid: true });
    for (const pattern of ["(?<=a)b", "(a)\\1", "(?<n>a)\\k<n>", `${"a".repeat(4_001)}`]) {
      expect(compileLinearPattern(pattern), pattern).toMatchObject({ ok: false, invalid: false });
    }
  });
});
