// E5: every public package carries what a user can trust before installing it: a LICENSE file
// (the root's), `repository`/`homepage`/`bugs` fields, and published `exports` that name no
// condition pointing at files the tarball lacks (`@lattice/source` points at `src/`, which is
// not published). The tarballs themselves are checked with publint and attw by
// `scripts/pack-check.mjs` in the test command; this checks the manifests they come from.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without types.
import { publishedExports } from "../scripts/lint-tarball.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const license = readFileSync(join(root, "LICENSE"), "utf8");
const packages = readdirSync(join(root, "packages"))
  .map((name) => ({
    folder: join(root, "packages", name),
    manifest: JSON.parse(readFileSync(join(root, "packages", name, "package.json"), "utf8")),
  }))
  .filter(({ manifest }) => manifest.private !== true);

describe("package metadata (E5)", () => {
  it("E5: there are public packages to check", () => {
    expect(packages.length).toBeGreaterThanOrEqual(13);
  });

  it.each(packages.map(({ folder, manifest }) => [manifest.name, folder, manifest]))(
    "E5: %s has the root's LICENSE, repository/homepage/bugs, and published exports without @lattice/source",
    (_name, folder, manifest) => {
      expect(existsSync(join(folder, "LICENSE"))).toBe(true);
      expect(readFileSync(join(folder, "LICENSE"), "utf8")).toBe(license);
      expect(manifest.license).toBe("MIT");
      expect(manifest.repository).toMatchObject({
        type: "git",
        url: expect.stringMatching(/^git\+https:\/\/github\.com\/.+\.git$/),
        directory: expect.stringMatching(/^packages\//),
      });
      expect(manifest.homepage).toMatch(/^https:\/\//);
      expect(manifest.bugs?.url).toMatch(/^https:\/\//);
      const published = manifest.publishConfig?.exports;
      expect(published).toBeDefined();
      expect(JSON.stringify(published)).not.toContain("@lattice/source");
      expect(published).toEqual(publishedExports(manifest.exports));
    },
  );

  it("E5: publishedExports takes out every @lattice/source condition and keeps the rest", () => {
    expect(
      publishedExports({
        ".": { "@lattice/source": "./src/index.ts", types: "./dist/index.d.ts", default: "./x.js" },
        "./package.json": "./package.json",
      }),
    ).toEqual({
      ".": { types: "./dist/index.d.ts", default: "./x.js" },
      "./package.json": "./package.json",
    });
  });
});
