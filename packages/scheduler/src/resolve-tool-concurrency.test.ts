import { InvalidOptionError, UnknownOptionError } from "@lattice/tools";
import { describe, expect, it } from "vitest";
import { DEFAULT_TOOL_CONCURRENCY, resolveToolConcurrency } from "./resolve-tool-concurrency.js";

describe("resolveToolConcurrency", () => {
  it('T14: defaults to { mode: "safe", maxConcurrency: 10 }', () => {
    expect(resolveToolConcurrency(undefined)).toEqual({ mode: "safe", maxConcurrency: 10 });
    expect(resolveToolConcurrency({})).toEqual({ mode: "safe", maxConcurrency: 10 });
    expect(resolveToolConcurrency({ mode: undefined, maxConcurrency: undefined })).toBe(
      DEFAULT_TOOL_CONCURRENCY,
    );
    expect(Object.isFrozen(resolveToolConcurrency({ mode: "all" }))).toBe(true);
  });

  it("T14: accepts the three modes and any positive integer", () => {
    expect(resolveToolConcurrency({ mode: "all" })).toEqual({ mode: "all", maxConcurrency: 10 });
    expect(resolveToolConcurrency({ mode: "sequential", maxConcurrency: 1 })).toEqual({
      mode: "sequential",
      maxConcurrency: 1,
    });
    expect(resolveToolConcurrency({ maxConcurrency: 64 })).toEqual({
      mode: "safe",
      maxConcurrency: 64,
    });
  });

  it("T14: refuses an unknown mode, naming the value and the allowed modes", () => {
    const error = catchError(() => resolveToolConcurrency({ mode: "parallel" }));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).code).toBe("invalid_option");
    expect((error as InvalidOptionError).option).toBe("toolConcurrency.mode");
    expect((error as Error).message).toBe(
      'AgentOptions: option "toolConcurrency.mode" must be "safe", "all" or "sequential", received "parallel". Omit it for the default "safe".',
    );
  });

  it.each([
    [0, "0"],
    [-1, "-1"],
    [1.5, "1.5"],
    [Number.NaN, "NaN"],
    [Number.POSITIVE_INFINITY, "Infinity"],
    ["4", '"4"'],
    [null, "null"],
  ])("T14: refuses maxConcurrency %s with a message naming it", (value, shown) => {
    const error = catchError(() => resolveToolConcurrency({ maxConcurrency: value }));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toBe(
      `AgentOptions: option "toolConcurrency.maxConcurrency" must be a positive integer (1, 2, 3, ...), received ${shown}. Omit it for the default 10.`,
    );
  });

  it("T14: refuses a toolConcurrency that is not an object", () => {
    for (const value of [null, 4, "safe", ["safe"]]) {
      const error = catchError(() => resolveToolConcurrency(value));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as Error).message).toMatch(
        /^AgentOptions: option "toolConcurrency" must be an object \{ mode\?, maxConcurrency\? \}, received /,
      );
    }
  });

  it("T31, T32: refuses an unknown key inside toolConcurrency with the standard sentence", () => {
    const error = catchError(() => resolveToolConcurrency({ mode: "safe", maxConcurency: 4 }));
    expect(error).toBeInstanceOf(UnknownOptionError);
    expect((error as Error).message).toBe(
      'AgentOptions: toolConcurrency: unknown option "maxConcurency". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
  });

  it("T32: uses the caller's prefix", () => {
    expect(() => resolveToolConcurrency({ bogus: 1 }, 'agentTool("researcher"):')).toThrow(
      'agentTool("researcher"): toolConcurrency: unknown option "bogus".',
    );
    expect(() => resolveToolConcurrency({ mode: "x" }, "DefineAgentOptions:")).toThrow(
      /^DefineAgentOptions: option "toolConcurrency.mode"/,
    );
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}
