import type { ToolResult } from "@lattice/tools";
import { describe, expect, it } from "vitest";
import { findEndTurn } from "./find-end-turn.js";

const result = (text: string, extra: Partial<ToolResult> = {}): ToolResult => ({
  content: [{ type: "text", text }],
  isError: false,
  endTurn: false,
  ...extra,
});

describe("findEndTurn", () => {
  it("T8: finds the result that asked to end the run, with its text", () => {
    const results = [
      { id: "a", result: result("one") },
      { id: "b", result: result("done", { endTurn: true }) },
    ];
    expect(findEndTurn(results)).toEqual({ index: 1, id: "b", text: "done" });
  });

  it("T10: picks the first endTurn in tool_use order", () => {
    const results = [
      { id: "a", result: result("plain") },
      { id: "b", result: result("first", { endTurn: true }) },
      { id: "c", result: result("second", { endTurn: true }) },
    ];
    expect(findEndTurn(results)?.id).toBe("b");
    expect(findEndTurn(results)?.text).toBe("first");
  });

  it("T11: carries structuredResult only with endTurn", () => {
    const results = [
      { id: "a", result: result("x", { endTurn: true, structuredResult: { score: 3 } }) },
    ];
    expect(findEndTurn(results)).toEqual({
      index: 0,
      id: "a",
      text: "x",
      structuredResult: { score: 3 },
    });
    expect(findEndTurn([{ id: "a", result: result("x") }])).toBeUndefined();
  });
});
