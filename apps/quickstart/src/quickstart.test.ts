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
