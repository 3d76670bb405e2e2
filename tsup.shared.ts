import type { Options } from "tsup";

/**
 * The build every public package shares: ESM only, declarations, source maps, ES2022. Entry
 * points share code through chunks, so a class (an error, say) is one class whichever entry
 * point it comes from: `instanceof` holds across "." and "./internal", "./builtin", ...
 */
export function packageBuild(entry: Record<string, string>): Options {
  return {
    entry,
    format: ["esm"],
    dts: true,
    sourcemap: true,
    target: "es2022",
    clean: true,
    splitting: true,
    treeshake: true,
  };
}
