import type { Options } from "tsup";

/** The build every public package shares: ESM only, declarations, source maps, ES2022. */
export function packageBuild(entry: Record<string, string>): Options {
  return {
    entry,
    format: ["esm"],
    dts: true,
    sourcemap: true,
    target: "es2022",
    clean: true,
    splitting: false,
    treeshake: true,
  };
}
