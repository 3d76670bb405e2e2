import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

// Run from tests/, a workspace package that depends on agent-lattice as a user would.
const consumer = fileURLToPath(new URL("../../../tests", import.meta.url));

// A resolve hook that fails any import of zod: importing the SDK must not need it (cold start
// stays small; users who define tools import zod themselves).
const blockZod = `data:text/javascript,${encodeURIComponent(`
import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(\`
export async function resolve(specifier, context, next) {
  if (specifier === "zod" || specifier.startsWith("zod/")) throw new Error("zod was imported: " + specifier);
  return next(specifier, context);
}\`));
`)}`;

async function importWithZodBlocked(code: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      "--conditions=@lattice/source",
      "--import",
      "tsx",
      "--import",
      blockZod,
      "--input-type=module",
      "-e",
      code,
    ],
    { cwd: consumer, timeout: 60_000 },
  );
  return stdout;
}

it('import("agent-lattice") loads no zod, and agents and agent tools work without it', async () => {
  const stdout = await importWithZodBlocked(`
    const lattice = await import("agent-lattice");
    const helper = lattice.defineAgent({ name: "helper", model: "m", apiKey: "k" });
    const agentTool = lattice.agentTool(helper);
    const agent = lattice.createAgent({ model: "m", apiKey: "k", tools: [agentTool] });
    console.log(typeof lattice.createAgent, typeof lattice.tool, agent.model, agentTool.kind);
  `);
  expect(stdout.trim()).toBe("function function m agent_tool");
});

it("the zod block works: importing zod itself fails under it", async () => {
  await expect(importWithZodBlocked('await import("zod/v4");')).rejects.toThrow(
    /zod was imported: zod\/v4/,
  );
});

it("the built agent-lattice loads no node:crypto at import (ids load it when the first is made)", async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `await import("agent-lattice");
       console.log(JSON.stringify(process.moduleLoadList.filter((name) => name.includes("crypto"))));`,
    ],
    { cwd: consumer, timeout: 60_000 },
  );
  expect(JSON.parse(stdout)).toEqual([]);
}, 70_000);
