import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { runQuickstart } from "./quickstart.js";

it("runs the product page's examples offline: parallel search, policy refusal, endTurn with structuredResult", async () => {
  const lines: string[] = [];
  let streamed = "";
  const result = await runQuickstart(
    (line) => lines.push(line),
    (text) => {
      streamed += text;
    },
    {},
  );
  expect(lines[0]).toMatch(
    /^Lattice quickstart: offline, against the scripted model server at http:\/\/127\.0\.0\.1:\d+/,
  );
  expect(streamed).toContain("I'll look up the three topics at once");
  const text = lines.join("\n");
  expect(text).toContain("plan: [search ‖ search ‖ search] → [calculator]");
  expect(text).toContain("policy refused the batch: invalid_tool_batch");
  expect(text).toContain("team notified of revision 2");
  expect(result).toMatchObject({
    subtype: "success",
    result: "8 seats cost 96 EUR per month; data stays in Frankfurt and Dublin.",
    structuredResult: { seats: 8, total: 96, currency: "EUR" },
    numTurns: 5,
  });
  // The three searches overlapped: all three started before any finished.
  const order = lines
    .filter((line) => /[▶■] search/.test(line))
    .map((line) => (line.includes("▶") ? "start" : "end"));
  expect(order.slice(0, 3)).toEqual(["start", "start", "start"]);
});

it("H29: the calculator applies an operator to two numbers; no text the model sends is run as code", async () => {
  const { calculator } = await import("./tools.js");
  const context = { signal: new AbortController().signal, toolUseId: "t1", toolName: "calculator" };
  expect(await calculator.handler({ a: 12, op: "*", b: 8 } as never, context)).toEqual({
    content: "96",
  });
  expect(await calculator.handler({ a: 7, op: "/", b: 2 } as never, context)).toEqual({
    content: "3.5",
  });
  // An expression is not an input it takes: the model sends numbers and an operator.
  const refused = await calculator.schema["~standard"].validate({ expr: "(1).constructor" });
  expect("issues" in refused && refused.issues !== undefined).toBe(true);
  // Nothing in the app's tools evaluates text.
  const source = readFileSync(new URL("./tools.ts", import.meta.url), "utf8");
  expect(source).not.toMatch(/(?<![\w$.])(?:Function|eval)\s*\(/);
});

it("L15, L1, L3: extracts a typed invoice; the first answer, missing its total, goes back with the error", async () => {
  const { extractInvoice } = await import("./extract-invoice.js");
  const lines: string[] = [];
  const result = await extractInvoice((line) => lines.push(line), {});
  expect(result.subtype).toBe("success");
  if (result.subtype !== "success") return;
  expect(result.output.total).toBe(149.94);
  expect(result.output.lines).toHaveLength(2);
  expect(result.numTurns).toBe(2);
  expect(lines[0]).toMatch(
    /^\ninvoice extraction: typed output, asked as (native_json_schema|forced_tool)$/,
  );
  expect(lines[1]).toMatch(/^ {2}sent back: .*total/);
  expect(lines[2]).toBe(
    "  ACME Cloud GmbH INV-2026-0412: 2 lines, total 149.94 EUR (2 model calls)",
  );
});
