// Lints one packed package as npm would publish it: publint (strict: warnings fail), the
// "Are the types wrong?" CLI with its ESM-only profile, and the packed manifest itself (no
// export condition may point at files the tarball lacks, such as the repo's `@lattice/source`
// condition for `src/`). Used by pack-check.mjs; both tools come from the repo's own
// devDependencies, and nothing here spawns a package manager.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { publint } from "publint";
import { formatMessage } from "publint/utils";

const require = createRequire(import.meta.url);
const attwPackage = require.resolve("@arethetypeswrong/cli/package.json");
const attwBin = join(dirname(attwPackage), JSON.parse(readFileSync(attwPackage, "utf8")).bin.attw);

/** `exports` with every `@lattice/source` condition taken out, as it must be published. */
export function publishedExports(exports) {
  if (typeof exports !== "object" || exports === null) return exports;
  return Object.fromEntries(
    Object.entries(exports)
      .filter(([key]) => key !== "@lattice/source")
      .map(([key, value]) => [key, publishedExports(value)]),
  );
}

/**
 * Lints the tarball `file` of the package whose source manifest is `manifest`.
 *
 * @returns the problems found, each a line naming the package and the tool; none when clean.
 */
export async function lintTarball(file, manifest) {
  const problems = [];
  const bytes = readFileSync(file);
  const tarball = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const { messages, pkg } = await publint({ pack: { tarball }, strict: true });
  for (const message of messages) {
    problems.push(`${manifest.name}: publint ${message.type}: ${formatMessage(message, pkg)}`);
  }
  if (JSON.stringify(pkg.exports).includes("@lattice/source")) {
    problems.push(
      `${manifest.name}: the packed exports keep the @lattice/source condition (src/ is not published): set publishConfig.exports`,
    );
  }
  if (JSON.stringify(pkg.exports) !== JSON.stringify(publishedExports(manifest.exports))) {
    problems.push(
      `${manifest.name}: publishConfig.exports is not package.json's exports without the @lattice/source conditions: make them the same`,
    );
  }
  try {
    execFileSync(process.execPath, [attwBin, file, "--profile", "esm-only", "--format", "ascii"], {
      stdio: ["ignore", "pipe", "pipe"],
      encoding: "utf8",
    });
  } catch (error) {
    problems.push(
      `${manifest.name}: attw (esm-only) found problems:\n${error.stdout}${error.stderr}`,
    );
  }
  return problems;
}
