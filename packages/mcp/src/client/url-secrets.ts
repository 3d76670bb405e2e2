/**
 * The words that make a query parameter's name look like a secret (H21). A name is cut into
 * words at anything that is not a letter or digit and where a lower-case letter meets an
 * upper-case one (`apiKey` → `api`, `key`; `X-Amz-Signature` → `x`, `amz`, `signature`); it
 * is a secret when one of its words is in this list, or ends with one of
 * {@link SECRET_QUERY_ENDINGS} (`accesstoken`, `clientsecret`, `accesskey`). The README lists
 * both.
 */
const SECRET_QUERY_WORDS: readonly string[] = [
  "token",
  "key",
  "apikey",
  "secret",
  "password",
  "passwd",
  "pwd",
  "pass",
  "passphrase",
  "passcode",
  "auth",
  "authorization",
  "sig",
  "signature",
  "hmac",
  "credential",
  "credentials",
  "session",
  "sessionid",
  "jwt",
  "bearer",
  "cookie",
];

/** Word endings that make a query parameter's name a secret: see {@link SECRET_QUERY_WORDS}. */
const SECRET_QUERY_ENDINGS: readonly string[] = [
  "token",
  "secret",
  "password",
  "passcode",
  "apikey",
  "accesskey",
  "secretkey",
  "privatekey",
  "authkey",
  "sessionkey",
  "signingkey",
  "masterkey",
  "signature",
  "hmac",
  "credential",
  "credentials",
];

const WORDS: ReadonlySet<string> = new Set(SECRET_QUERY_WORDS);

/**
 * Whether a query parameter's name looks like a secret (`token`, `api_key`, `apiKey`,
 * `X-Amz-Signature`, `client_secret`, ...): see {@link SECRET_QUERY_WORDS}.
 *
 * @param name - The parameter's name, as written in the URL.
 */
function isSecretQueryName(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== "");
  return words.some(
    (word) => WORDS.has(word) || SECRET_QUERY_ENDINGS.some((ending) => word.endsWith(ending)),
  );
}

/**
 * The credentials a URL carries, as a phrase for an error message: its user name and
 * password, and the query parameters whose names look like secrets. Empty when it has none.
 *
 * @param url - The URL.
 */
export function describeUrlSecrets(url: URL): string[] {
  const found: string[] = [];
  if (url.username !== "" || url.password !== "") {
    found.push(url.password !== "" ? "a user name and password" : "a user name");
  }
  const names = new Set<string>();
  for (const name of url.searchParams.keys()) {
    if (isSecretQueryName(name)) names.add(name);
  }
  for (const name of names) found.push(`the query parameter ${JSON.stringify(name)}`);
  return found;
}
