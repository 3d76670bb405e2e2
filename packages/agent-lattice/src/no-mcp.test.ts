import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const packages = fileURLToPath(new URL("../..", import.meta.url));

describe("M15: importing agent-lattice never loads the MCP SDK", () => {
  it("no built file of agent-lattice or the packages it loads imports @modelcontextprotocol or @lattice/mcp", () => {
    const offenders: string[] = [];
    for (const name of ["agent-lattice", "core", "tools", "scheduler", "providers"]) {
      const dist = join(packages, name, "dist");
      for (const file of readdirSync(dist)) {
        if (!file.endsWith(".js")) continue;
        const text = readFileSync(join(dist, file), "utf8");
        if (/["']@modelcontextprotocol\/|["']@lattice\/mcp["'/]/.test(text))
          offenders.push(`${name}/dist/${file}`);
      }
    }
    expect(offenders).toEqual([]);
    const manifest = JSON.parse(
      readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "package.json"), "utf8"),
    );
    expect(Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })).not.toContain(
      "@lattice/mcp",
    );
  });
});
