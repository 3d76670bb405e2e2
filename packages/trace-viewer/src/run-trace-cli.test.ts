import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jsonlTraceWriter } from "@lattice/core";
import { afterAll, describe, expect, it } from "vitest";
import { recordQuickstartTrace } from "./fixtures/record-traces.js";
import { parseTraceJsonl, TraceParseError } from "./index.js";
import { runTraceCli } from "./run-trace-cli.js";

const folder = mkdtempSync(join(tmpdir(), "lattice-trace-cli-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

async function cli(...args: string[]) {
  const out: string[] = [];
  const error: string[] = [];
  const code = await runTraceCli(args, {
    out: (line) => out.push(line),
    error: (line) => error.push(line),
  });
  return { code, out: out.join("\n"), error: error.join("\n") };
}

describe("parseTraceJsonl", () => {
  it("O10: reads what jsonlTraceWriter writes, skipping blank lines and \\r", () => {
    const events = parseTraceJsonl(
      '{"type":"run_started","time":1,"runId":"r","sessionId":"s"}\r\n\n{"type":"run_finished","time":2}\n',
    );
    expect(events.map((event) => event.type)).toEqual(["run_started", "run_finished"]);
  });

  it("O10: names the line that is not JSON, or not an event", () => {
    const bad = () => parseTraceJsonl('{"type":"a","time":1}\n{"type":\n');
    expect(bad).toThrow(TraceParseError);
    expect(bad).toThrow(/^Trace line 2 is not valid JSON/);
    try {
      parseTraceJsonl('{"type":"a","time":1}\n\n[1,2]');
    } catch (error) {
      expect(error).toMatchObject({ name: "TraceParseError", code: "trace_parse_failed", line: 3 });
    }
  });
});

describe("lattice-trace timeline", () => {
  it("O10: draws a trace written by jsonlTraceWriter next to it, or where -o says", async () => {
    const input = join(folder, "run.jsonl");
    const writer = jsonlTraceWriter(input);
    for (const event of await recordQuickstartTrace()) writer.onTrace(event);
    await writer.close();
    const first = await cli("timeline", input);
    expect(first).toMatchObject({ code: 0, error: "" });
    expect(first.out).toContain(join(folder, "run.html"));
    const html = readFileSync(join(folder, "run.html"), "utf8");
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/(src|href)="https?:/);
    const out = join(folder, "elsewhere.html");
    expect((await cli("timeline", input, "-o", out)).code).toBe(0);
    expect(existsSync(out)).toBe(true);
  }, 20_000);

  it("O10: a missing file, a bad JSON line and bad arguments get clear errors", async () => {
    const missing = await cli("timeline", join(folder, "nope.jsonl"));
    expect(missing.code).toBe(1);
    expect(missing.error).toMatch(/trace file ".*nope\.jsonl" does not exist/);
    const broken = join(folder, "broken.jsonl");
    writeFileSync(
      broken,
      '{"type":"run_started","time":1,"runId":"r","sessionId":"s"}\nnot json\n',
    );
    const bad = await cli("timeline", broken);
    expect(bad.code).toBe(1);
    expect(bad.error).toContain(`${broken}:2: Trace line 2 is not valid JSON`);
    expect((await cli()).code).toBe(2);
    expect((await cli("draw", "x")).error).toContain('unknown command "draw"');
    expect((await cli("timeline")).error).toContain("name the trace file");
    expect((await cli("timeline", broken, "-o")).error).toContain("-o needs a file name");
  });
});
