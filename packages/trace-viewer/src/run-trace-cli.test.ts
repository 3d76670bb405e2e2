import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { jsonlTraceWriter, type TraceEvent } from "@lattice/core";
import { afterAll, describe, expect, it } from "vitest";
import { recordQuickstartTrace } from "./fixtures/record-traces.js";
import { runInChild } from "./fixtures/run-in-child.js";
import { sampleTrace } from "./fixtures/sample-trace.js";
import { parseTraceJsonl, TraceParseError } from "./index.js";
import { runTraceCli } from "./run-trace-cli.js";

const folder = mkdtempSync(join(tmpdir(), "lattice-trace-cli-"));
const cliPath = fileURLToPath(new URL("./cli.ts", import.meta.url));
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
      '{"type":"run_started","time":1,"runId":"r","sessionId":"s"}\r\n\n{"type":"run_finished","time":2,"runId":"r","subtype":"success"}\n',
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

/** The sample trace as JSONL, with `key` of the `nth` event of `type` set to `value` (removed for `undefined`). */
function sampleJsonl(change?: { type: string; key: string; value: unknown; nth?: number }): string {
  const events = sampleTrace() as unknown as Record<string, unknown>[];
  if (change !== undefined) {
    const target = events.filter((event) => event.type === change.type)[change.nth ?? 0];
    if (target === undefined) throw new Error(`no ${change.type} in the sample trace`);
    if (change.value === undefined) delete target[change.key];
    else target[change.key] = change.value;
  }
  return `${events.map((event) => JSON.stringify(event)).join("\n")}\n`;
}

/** The 1-based line of the `nth` event of `type` in {@link sampleJsonl}. */
function lineOf(type: string, nth = 0): number {
  const types = sampleTrace().map((event: TraceEvent) => event.type);
  return types.map((t, index) => [t, index] as const).filter(([t]) => t === type)[nth]![1] + 1;
}

let fileNumber = 0;
function traceFile(text: string, name = `trace-${++fileNumber}.jsonl`): string {
  const path = join(folder, name);
  writeFileSync(path, text);
  return path;
}

describe("lattice-trace timeline against hostile traces", () => {
  it("H15: a turn that is a string holding markup is refused, naming the line and the field", async () => {
    const input = traceFile(
      sampleJsonl({
        type: "tool_call_queued",
        key: "turn",
        value: "<img src=x onerror=alert(document.domain)>",
      }),
    );
    const result = await cli("timeline", input);
    const line = lineOf("tool_call_queued");
    expect(result.code).toBe(1);
    expect(result.error).toContain(
      `${input}:${line}: Trace line ${line} (tool_call_queued): "turn" must be`,
    );
    expect(existsSync(input.replace(/\.jsonl$/, ".html"))).toBe(false);
  });

  it("H16: an unknown status, a missing usage, plan or approvals name the line and the field", async () => {
    const cases: [type: string, key: string, value: unknown, field: string][] = [
      ["tool_call_finished", "status", "exploded", "status"],
      ["model_request_finished", "usage", undefined, "usage"],
      ["model_request_finished", "usage", { inputTokens: "many" }, "usage.inputTokens"],
      ["batch_planned", "plan", undefined, "plan"],
      ["approval_requested", "approvals", undefined, "approvals"],
      ["run_finished", "subtype", 7, "subtype"],
    ];
    for (const [type, key, value, field] of cases) {
      const input = traceFile(sampleJsonl({ type, key, value }));
      const result = await cli("timeline", input);
      const line = lineOf(type);
      expect(result.code, `${type} ${field}`).toBe(1);
      expect(result.error, `${type} ${field}`).toContain(
        `${input}:${line}: Trace line ${line} (${type}): "${field}"`,
      );
    }
  });

  it("H16: the command prints a clear error and no stack trace for traces it cannot draw", async () => {
    const inputs = [
      traceFile(
        sampleJsonl({
          type: "tool_call_finished",
          key: "status",
          value: "exploded",
        }),
      ),
      traceFile(
        sampleJsonl({
          type: "model_request_finished",
          key: "usage",
          value: undefined,
        }),
      ),
      // JSON reads 1e309 as Infinity; ±1e308 overflow the span.
      traceFile(
        sampleJsonl({
          type: "tool_call_started",
          key: "time",
          value: "1e309",
        }).replace('"1e309"', "1e309"),
      ),
      traceFile(
        sampleJsonl({
          type: "model_request_started",
          key: "time",
          value: -1e308,
        }).replace(
          /("type":"model_request_finished","time":)3000/,
          (_match, head: string) => `${head}1e308`,
        ),
      ),
    ];
    for (const input of inputs) {
      const outcome = await runInChild("", {
        file: { path: cliPath, args: ["timeline", input] },
        timeoutMs: 30_000,
        heapMb: 96,
      });
      expect(outcome, `${input}: ${outcome.stderr.slice(0, 600)}`).toMatchObject({
        code: 1,
        timedOut: false,
      });
      expect(outcome.stderr).toMatch(
        new RegExp(
          `^lattice-trace timeline: ${input}:\\d+: Trace line \\d+ \\([a-z_]+\\): "[a-z.A-Z]+"`,
        ),
      );
      expect(outcome.stderr).not.toMatch(/\n\s+at /);
    }
  }, 60_000);

  it("H16: a trace whose last line is cut is drawn from the complete lines, with a note on stderr and on the page", async () => {
    const whole = sampleJsonl();
    const lines = whole.trimEnd().split("\n");
    const cut = `${lines.slice(0, -1).join("\n")}\n${lines.at(-1)!.slice(0, 25)}`;
    const input = traceFile(cut);
    const result = await cli("timeline", input);
    expect(result.code).toBe(0);
    expect(result.error).toContain(
      `lattice-trace timeline: ${input}:${lines.length}: the last line is cut (no newline at its end, and not valid JSON), as a writer that was stopped leaves it. It was dropped: the page shows the ${lines.length - 1} events before it.`,
    );
    const html = readFileSync(input.replace(/\.jsonl$/, ".html"), "utf8");
    expect(html).toContain(`last line (line ${lines.length}) is cut`);
    expect(html).toContain('data-calls="7"');
    // The same line with a newline after it is a broken line, not a cut one.
    const broken = await cli("timeline", traceFile(`${cut}\n`));
    expect(broken.code).toBe(1);
    expect(broken.error).toContain(`Trace line ${lines.length} is not valid JSON`);
  });
});

describe("lattice-trace timeline never overwrites its input", () => {
  it("H17: -o naming the input (as given, relative, through a symlink or a hard link) is refused with exit 2", async () => {
    const text = sampleJsonl();
    const input = traceFile(text, "same.jsonl");
    symlinkSync(input, join(folder, "same-link.html"));
    linkSync(input, join(folder, "same-hard.html"));
    const before = statSync(input).mtimeMs;
    for (const out of [
      input,
      relative(process.cwd(), input),
      join(folder, ".", "sub", "..", "same.jsonl"),
      join(folder, "same-link.html"),
      join(folder, "same-hard.html"),
    ]) {
      const result = await cli("timeline", input, "-o", out);
      expect(result.code, out).toBe(2);
      expect(result.error, out).toContain(`"${out}"`);
      expect(result.error, out).toContain(`"${input}"`);
      expect(result.error, out).toMatch(/would overwrite the trace/);
    }
    expect(readFileSync(input, "utf8")).toBe(text);
    expect(statSync(input).mtimeMs).toBe(before);
  });

  it("H17: a trace named *.html, whose page would be written over it, is refused with exit 2", async () => {
    const text = sampleJsonl();
    const input = traceFile(text, "run.html");
    const result = await cli("timeline", input);
    expect(result.code).toBe(2);
    expect(result.error).toContain(`"${input}"`);
    expect(result.error).toMatch(/would overwrite the trace.*-o/s);
    expect(readFileSync(input, "utf8")).toBe(text);
    // With -o elsewhere it is drawn.
    expect((await cli("timeline", input, "-o", join(folder, "run-page.html"))).code).toBe(0);
  });

  it("H17: -o naming the input through a symlinked folder and .. is refused: paths are compared as the system resolves them", async () => {
    // work/link -> real/deep, so work/link/../x.jsonl is real/x.jsonl, not work/x.jsonl.
    const root = mkdtempSync(join(folder, "dotdot-"));
    mkdirSync(join(root, "real", "deep"), { recursive: true });
    mkdirSync(join(root, "work"));
    const text = sampleJsonl();
    writeFileSync(join(root, "real", "x.jsonl"), text);
    symlinkSync(join(root, "real", "deep"), join(root, "work", "link"));
    const input = `${join(root, "work", "link")}/../x.jsonl`;
    for (const out of [join(root, "real", "x.jsonl"), `${join(root, "work", "link")}/../x.jsonl`]) {
      const result = await cli("timeline", input, "-o", out);
      expect(result.code, out).toBe(2);
      expect(result.error, out).toMatch(/would overwrite the trace/);
    }
    // And the trace in the other direction: the input named plainly, -o through the link.
    const plain = await cli("timeline", join(root, "real", "x.jsonl"), "-o", input);
    expect(plain.code).toBe(2);
    expect(readFileSync(join(root, "real", "x.jsonl"), "utf8")).toBe(text);
    // The default output goes where the system puts it: real/x.html, next to the real trace.
    expect((await cli("timeline", input)).code).toBe(0);
    expect(existsSync(join(root, "real", "x.html"))).toBe(true);
    expect(existsSync(join(root, "work", "x.html"))).toBe(false);
  });

  it("H17: the page is never written through a symlink: a run.html linking elsewhere is replaced, and its target is untouched", async () => {
    const root = mkdtempSync(join(folder, "link-out-"));
    const precious = join(root, "bashrc");
    writeFileSync(precious, "export PATH=/usr/bin\n");
    const input = join(root, "run.jsonl");
    writeFileSync(input, sampleJsonl());
    symlinkSync(precious, join(root, "run.html"));
    const result = await cli("timeline", input);
    expect(result.code, result.error).toBe(0);
    expect(readFileSync(precious, "utf8")).toBe("export PATH=/usr/bin\n");
    expect(lstatSync(join(root, "run.html")).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(root, "run.html"), "utf8")).toMatch(/^<!doctype html>/);
    // No temporary file is left behind.
    expect(readdirSync(root).sort()).toEqual(["bashrc", "run.html", "run.jsonl"]);
  });

  it("O10: -o naming a folder is refused with exit 2, saying -o names the page's file", async () => {
    const input = traceFile(sampleJsonl());
    const dir = mkdtempSync(join(folder, "out-dir-"));
    const result = await cli("timeline", input, "-o", dir);
    expect(result.code).toBe(2);
    expect(result.error).toContain(`"${dir}" is a folder`);
    expect(result.error).toMatch(/-o names the page's file/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("O10: - reads the trace from standard input, and needs -o", async () => {
    const out = join(folder, "from-stdin.html");
    const outcome = await runInChild("", {
      file: { path: cliPath, args: ["timeline", "-", "-o", out] },
      stdin: sampleJsonl(),
      timeoutMs: 30_000,
    });
    expect(outcome, outcome.stderr).toMatchObject({ code: 0 });
    expect(readFileSync(out, "utf8")).toContain('data-calls="7"');
    const bare = await cli("timeline", "-");
    expect(bare.code).toBe(2);
    expect(bare.error).toMatch(/standard input.*-o/);
  }, 40_000);

  it("H17: - with standard input redirected from the -o file is refused", async () => {
    const input = traceFile(sampleJsonl(), "redirected.jsonl");
    const outcome = await runInChild("", {
      file: { path: cliPath, args: ["timeline", "-", "-o", input] },
      stdin: { path: input },
      timeoutMs: 30_000,
    });
    expect(outcome, outcome.stderr).toMatchObject({ code: 2 });
    expect(outcome.stderr).toMatch(/would overwrite the trace/);
    expect(readFileSync(input, "utf8")).toBe(sampleJsonl());
  }, 40_000);

  it("O10: a trace that starts with a byte order mark, with \\r\\n line ends, is read", async () => {
    const input = traceFile(`\uFEFF${sampleJsonl().replaceAll("\n", "\r\n")}`);
    const result = await cli("timeline", input);
    expect(result, result.error).toMatchObject({ code: 0, error: "" });
    expect(readFileSync(input.replace(/\.jsonl$/, ".html"), "utf8")).toContain('data-calls="7"');
  });

  it("H16: a file whose only line is not JSON is an error, not a cut trace", async () => {
    const input = traceFile("this is not a trace at all");
    const result = await cli("timeline", input);
    expect(result.code).toBe(1);
    expect(result.error).toMatch(
      /:1: Trace line 1 is not valid JSON.*no complete event before it/s,
    );
    expect(existsSync(input.replace(/\.jsonl$/, ".html"))).toBe(false);
    expect(() => parseTraceJsonl('{"type":"run_sta')).toThrow(TraceParseError);
  });

  it("H16: control characters and bidi overrides from a trace reach standard error escaped", async () => {
    const nasty = "\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202eevil\u2066";
    const lines = sampleJsonl().trimEnd().split("\n");
    const cases = [
      // A line that is not JSON, before the last one.
      [lines[0], `{"type": ${nasty}`, ...lines.slice(1)].join("\n"),
      sampleJsonl({ type: "tool_call_finished", key: "status", value: nasty }),
    ];
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters.
    const unprintable = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
    for (const text of cases) {
      // The library's own messages are escaped too, not only what the command prints.
      let message = "";
      try {
        parseTraceJsonl(text);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/^Trace line/);
      expect(message).not.toMatch(unprintable);
      const result = await cli("timeline", traceFile(text));
      expect(result.code).toBe(1);
      expect(result.error).not.toMatch(unprintable);
      expect(result.error).toMatch(/\\u001b|\\x1b/);
    }
  });
});
