/** A key found for a provider, and where it came from (for error messages; never the key). */
export interface ResolvedApiKey {
  /** The key, or `undefined` when none was found. */
  readonly key: string | undefined;
  /** Where to set the key, for messages: an environment variable or an option name. */
  readonly hint: string;
}

/**
 * Picks the API key for a provider: the explicit option first, then the environment variable.
 *
 * The key itself is only returned, never printed: messages use `hint`.
 *
 * @param explicit - The key passed as an option, if any.
 * @param variable - The environment variable to read when no key was passed.
 * @param optionName - The option's name, for the hint. Default `"apiKey"`.
 */
export function resolveApiKey(
  explicit: string | undefined,
  variable: string,
  optionName = "apiKey",
): ResolvedApiKey {
  if (explicit !== undefined && explicit !== "") {
    return { key: explicit, hint: `the ${optionName} option` };
  }
  const value = readEnvironment(variable);
  return {
    key: value === undefined || value === "" ? undefined : value,
    hint: `the ${variable} environment variable or the ${optionName} option`,
  };
}

function readEnvironment(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
    ?.env;
  return env?.[name];
}
