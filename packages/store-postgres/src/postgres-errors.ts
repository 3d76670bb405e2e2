// How the store reads pg's errors and names the server it talks to (never with a password).

/** Where a store connects, for messages: never holds a password. */
export interface ServerDescription {
  /** `host:port/database`, for example `127.0.0.1:5432/lattice`. */
  readonly address: string;
  /** The connection string with its password replaced by `***`, when there is one. */
  readonly redacted: string | undefined;
}

/** The fields of a pg `PoolConfig` the description reads. */
export interface ServerConfig {
  readonly connectionString?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: number | string | undefined;
  readonly database?: string | undefined;
  readonly user?: string | undefined;
}

/**
 * Describes the server of a pool's config: host, port and database (with pg's defaults and the
 * PG* environment variables it would use), and the connection string with the password hidden.
 */
export function describeServer(config: ServerConfig): ServerDescription {
  let host = config.host;
  let port = config.port === undefined ? undefined : String(config.port);
  let database = config.database;
  let user = config.user;
  let redacted: string | undefined;
  if (config.connectionString !== undefined) {
    redacted = "(a connection string that is not a URL)";
    try {
      const url = new URL(config.connectionString);
      const query = url.searchParams;
      host ??=
        url.hostname !== "" ? decodeURIComponent(url.hostname) : (query.get("host") ?? undefined);
      port ??= url.port !== "" ? url.port : (query.get("port") ?? undefined);
      const path = decodeURIComponent(url.pathname.replace(/^\//, ""));
      database ??= path !== "" ? path : (query.get("dbname") ?? undefined);
      user ??= url.username !== "" ? decodeURIComponent(url.username) : undefined;
      if (url.password !== "") url.password = "***";
      if (query.has("password")) query.set("password", "***");
      redacted = url.toString();
    } catch {
      // Not a URL (a socket path, say): the address falls back to pg's defaults.
    }
  }
  const env = process.env;
  host ??= env.PGHOST ?? "localhost";
  port ??= env.PGPORT ?? "5432";
  database ??= env.PGDATABASE ?? user ?? env.PGUSER ?? env.USER ?? "postgres";
  return { address: `${host}:${port}/${database}`, redacted };
}

/**
 * The SQLSTATE of an error the server sent (pg's `DatabaseError`: a 5-character `code` and a
 * `severity`), or `undefined` for any other error (a socket's `ECONNREFUSED`, a timeout, ...).
 */
export function sqlStateOf(error: unknown): string | undefined {
  if (error === null || typeof error !== "object") return undefined;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  return typeof code === "string" && code.length === 5 && typeof severity === "string"
    ? code
    : undefined;
}

/**
 * Whether an error means the connection is unusable (so the client must be dropped, and the
 * failure is reported as a connection failure): any error that did not come from the server,
 * and the server's connection and shutdown errors (SQLSTATE class 08, 57P01–57P03).
 */
export function isConnectionError(error: unknown): boolean {
  const sqlState = sqlStateOf(error);
  if (sqlState === undefined) return true;
  return sqlState.startsWith("08") || /^57P0[123]$/.test(sqlState);
}

/** What to do about a failed connection, by its cause. */
export function connectionAdvice(error: unknown, timeoutMs: number | undefined): string {
  const sqlState = sqlStateOf(error);
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (sqlState === "28P01" || sqlState === "28000") {
    return "The server refused the login: check the user name and password.";
  }
  if (sqlState === "3D000") {
    return "The database does not exist: create it (for example with createdb), or fix the database name.";
  }
  if (sqlState === "53300") {
    return "The server has no connection slot left: lower the pools' max sizes, or raise max_connections.";
  }
  if (code === "ECONNREFUSED") {
    return "Nothing accepts connections there: start the server, or fix the host and port.";
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return "The host name does not resolve: fix the host.";
  }
  if (/timeout/i.test(message)) {
    return `No connection within ${timeoutMs === undefined ? "the pool's connection timeout" : `${timeoutMs} ms`}: the server did not answer (check the host, port and firewall), or every connection of the pool stayed busy.`;
  }
  return "Check that the server is running and reachable from here, and that the host, port, database, user and password are right.";
}
