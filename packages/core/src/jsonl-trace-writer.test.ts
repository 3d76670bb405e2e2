import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LatticeError } from "@lattice/tools";
import { describe, expect, it } from "vitest";
import { jsonlTraceWriter, type TraceEvent } from "./index.js";

const event = (type: string, extra: object = {}) =>
  ({ type, time: 1.5, sessionId: "s", ...extra }) as unknown as TraceEvent;

describe("jsonlTraceWriter", () => {
  it("writes one JSON line per event to a file, and closes it", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "lattice-trace-")), "run.jsonl");
    const writer = jsonlTraceWriter(path);
    writer.onTrace(event("run_started"));
    writer.onTrace(event("run_finished", { numTurns: 1 }));
    await writer.close();
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    expect(lines.map((line) => JSON.parse(line).type)).toEqual(["run_started", "run_finished"]);
  });

  it("a path that cannot be written does not crash the process: close() rejects naming it", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "lattice-trace-")), "missing", "run.jsonl");
    const writer = jsonlTraceWriter(path);
    writer.onTrace(event("run_started"));
    // Let the stream try to open the file and fail before close() is called.
    await new Promise((resolve) => setTimeout(resolve, 50));
    writer.onTrace(event("run_finished"));
    const error = await writer.close().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(LatticeError);
    expect((error as LatticeError).code).toBe("trace_write_failed");
    expect((error as LatticeError).message).toBe(
      `jsonlTraceWriter(${JSON.stringify(path)}): cannot write the trace file: ENOENT: no such file or directory, open '${path}'. Check that its directory exists and is writable; events after the failure were not written.`,
    );
    expect(((error as LatticeError).cause as { code?: string }).code).toBe("ENOENT");
    await expect(writer.close()).rejects.toBe(error);
  });

  it("close() called at once also rejects for a path that cannot be written", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "lattice-trace-")), "missing", "run.jsonl");
    const writer = jsonlTraceWriter(path);
    writer.onTrace(event("run_started"));
    await expect(writer.close()).rejects.toMatchObject({ code: "trace_write_failed" });
  });

  it("writes to any sink and serialises errors as { name, code, message }", async () => {
    const chunks: string[] = [];
    const writer = jsonlTraceWriter({ write: (chunk) => chunks.push(chunk) });
    const error = Object.assign(new Error("boom"), { code: "x_failed" });
    writer.onTrace(event("batch_policy", { error }));
    await writer.close();
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.endsWith("\n")).toBe(true);
    expect(JSON.parse(chunks[0] as string).error).toEqual({
      name: "Error",
      code: "x_failed",
      message: "boom",
    });
  });
});
