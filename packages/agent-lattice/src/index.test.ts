import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as core from "@lattice/core";
import * as coreTesting from "@lattice/core/testing";
import * as providers from "@lattice/providers";
import * as testingServer from "@lattice/providers/testing";
import * as scheduler from "@lattice/scheduler";
import * as tools from "@lattice/tools";
import * as builtinTools from "@lattice/tools/builtin";
import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import * as builtin from "./builtin.js";
import * as umbrella from "./index.js";
import * as testing from "./testing.js";

describe("agent-lattice re-exports", () => {
  it('T1: `import { createAgent, tool } from "agent-lattice"` are the scoped packages\' functions', () => {
    expect(umbrella.tool).toBe(tools.tool);
    expect(umbrella.createAgent).toBe(core.createAgent);
    const calculator = umbrella.tool(
      "calculator",
      "d",
      z.object({ expr: z.string() }),
      async () => ({
        content: "1",
      }),
    );
    expect(calculator.kind).toBe("tool");
  });

  it.each([
    ["@lattice/core", core, umbrella],
    ["@lattice/providers", providers, umbrella],
    ["@lattice/scheduler", scheduler, umbrella],
    ["@lattice/tools", tools, umbrella],
    ["@lattice/tools/builtin", builtinTools, builtin],
    ["@lattice/providers/testing", testingServer, testing],
    ["@lattice/core/testing", coreTesting, testing],
  ])("re-exports every runtime export of %s", (_name, source, target) => {
    for (const [name, value] of Object.entries(source)) {
      expect(target, name).toHaveProperty(name);
      expect((target as Record<string, unknown>)[name], name).toBe(value);
    }
  });

  it("the re-export lists (types included) match the packages' entry points", () => {
    const script = fileURLToPath(new URL("../scripts/sync-exports.mjs", import.meta.url));
    expect(() =>
      execFileSync(process.execPath, [script, "--check"], { stdio: "pipe" }),
    ).not.toThrow();
  });
});
