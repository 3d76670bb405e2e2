import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
