import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
const packages = join(packageRoot, "..");
const drivers =
  /["'](?:bullmq|ioredis|pg|pg-pool|@lattice\/(?:bullmq|store-redis|store-postgres))["'/]/;

describe("D14: importing agent-lattice never loads BullMQ, ioredis or pg", () => {
  it("no built file of agent-lattice or the packages it loads imports them, and its manifest does not depend on them", () => {
    const offenders: string[] = [];
    for (const name of ["agent-lattice", "core", "tools", "scheduler", "providers"]) {
      const dist = join(packages, name, "dist");
      for (const file of readdirSync(dist)) {
        if (!file.endsWith(".js")) continue;
        if (drivers.test(readFileSync(join(dist, file), "utf8"))) {
          offenders.push(`${name}/dist/${file}`);
        }
      }
    }
    expect(offenders).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8"));
    const dependencies = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies });
    for (const name of [
      "bullmq",
      "ioredis",
      "pg",
      "@lattice/bullmq",
      "@lattice/store-redis",
      "@lattice/store-postgres",
    ]) {
      expect(dependencies).not.toContain(name);
    }
  });

  it("a process that imports the built agent-lattice resolves none of them", () => {
    const folder = mkdtempSync(join(tmpdir(), "lattice-d14-"));
    try {
      const hooks = join(folder, "hooks.mjs");
      writeFileSync(
        hooks,
        `export async function resolve(specifier, context, next) {
  process.stderr.write("resolve " + specifier + "\\n");
  return next(specifier, context);
}
`,
      );
      const register = join(folder, "register.mjs");
      writeFileSync(
        register,
        `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
      );
      const entry = pathToFileURL(join(packageRoot, "dist", "index.js")).href;
      const child = spawnSync(
        process.execPath,
        [
          "--import",
          pathToFileURL(register).href,
          "--input-type=module",
          "-e",
          `await import(${JSON.stringify(entry)});`,
        ],
        { encoding: "utf8" },
      );
      expect(child.status, child.stderr).toBe(0);
      const resolved = child.stderr
        .split("\n")
        .filter((line) => line.startsWith("resolve "))
        .map((line) => line.slice("resolve ".length));
      // The hook saw the import graph (agent-lattice loads @lattice/core and its peers)...
      expect(resolved).toContain("@lattice/core");
      // ...and no queue or database driver in it.
      expect(resolved.filter((specifier) => drivers.test(`"${specifier}"`))).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
