import { LatticeError } from "@lattice/tools";
import { describe, expect, it } from "vitest";
import { AbortError, createAbortError } from "./abort-error.js";

describe("createAbortError", () => {
  it("T22: makes an error named AbortError with code aborted", () => {
    const error = createAbortError();
    expect(error).toBeInstanceOf(AbortError);
    expect(error).toBeInstanceOf(LatticeError);
    expect(error.name).toBe("AbortError");
    expect(error.code).toBe("aborted");
    expect(error.message).toMatch(/^The query was aborted\. /);
  });

  it("T22: quotes a string or Error reason and keeps it as cause", () => {
    expect(createAbortError("user pressed stop").message).toMatch(
      /^The query was aborted: user pressed stop\./,
    );
    const reason = new Error("deadline");
    const error = createAbortError(reason);
    expect(error.message).toMatch(/^The query was aborted: deadline\./);
    expect(error.cause).toBe(reason);
  });

  it("T22: does not quote the platform's default reason", () => {
    const controller = new AbortController();
    controller.abort();
    const error = createAbortError(controller.signal.reason);
    expect(error.message).toMatch(/^The query was aborted\. /);
    expect(error.cause).toBe(controller.signal.reason);
  });
});
