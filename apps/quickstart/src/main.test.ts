import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

it("the demo program runs offline to a successful result and exits 0", async () => {
  const cwd = fileURLToPath(new URL("..", import.meta.url));
  const env = { ...process.env };
  delete env.DEEPSEEK_API_KEY;
  delete env.ANTHROPIC_API_KEY;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--conditions=@lattice/source", "--import", "tsx", "src/main.ts"],
    { cwd, env, timeout: 60_000 },
  );
  const lines = stdout.split("\n");
  expect(lines[0]).toMatch(/^Lattice quickstart: offline/);
  expect(stdout).toContain("result (success, 5 turns");
  expect(stdout).toContain('structuredResult: {"seats":8,"total":96,"currency":"EUR"}');
  expect(stdout).toContain("ACME Cloud GmbH INV-2026-0412: 2 lines, total 149.94 EUR");
});
