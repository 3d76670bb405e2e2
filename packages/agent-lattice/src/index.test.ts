import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import * as umbrella from "./index.js";
import * as tools from "@lattice/tools";

describe("agent-lattice re-exports", () => {
  it("T1: `import { tool } from \"agent-lattice\"` is the same function as @lattice/tools", () => {
    expect(umbrella.tool).toBe(tools.tool);
    const calculator = umbrella.tool("calculator", "d", z.object({ expr: z.string() }), async () => ({
      content: "1",
    }));
    expect(calculator.kind).toBe("tool");
  });

  it("re-exports every runtime export of @lattice/tools", () => {
    for (const name of Object.keys(tools)) {
      expect(umbrella, name).toHaveProperty(name);
    }
  });
});
