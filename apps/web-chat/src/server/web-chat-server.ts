import { existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { serveStatic } from "@hono/node-server/serve-static";
import { Hono } from "hono";
import type { WebChatToolsOptions } from "./tools.js";
import { openWebChatAgent } from "./web-chat-agent.js";

/** Options of {@link startWebChatServer}. */
export interface WebChatServerOptions {
  /** The port to listen on; 0 takes a free one. */
  readonly port: number;
  /** The folder of the SQLite session file; created if missing. */
  readonly dataDir: string;
  /** The built page (`vite build`'s `dist/`). */
  readonly pageDir: string;
  /** The environment, for the API keys. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** How long the tools take (tests make them shorter). */
  readonly tools?: WebChatToolsOptions;
}

/** A running web chat. */
export interface WebChatServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** One line that says which model answers. */
  readonly banner: string;
  /** The SQLite file that keeps the chats. */
  readonly databasePath: string;
  /** Stops the server, the scripted model server and closes the database. */
  close(): Promise<void>;
}

/** The ids of chats and runs as the routes take them: the page's and Lattice's ids. */
const ID = /^[\w-]{1,128}$/;

/**
 * Starts the web chat on 127.0.0.1: `POST /api/chat` (the `useChat` route), `GET
 * /api/chat/:id` (a chat's messages, for a reload), `GET /api/runs/:runId/timeline` (a run's
 * tool timeline as HTML) and the built page.
 *
 * @param options - {@link WebChatServerOptions}.
 * @throws Error when the page is not built (`pageDir` has no `index.html`).
 */
export async function startWebChatServer(options: WebChatServerOptions): Promise<WebChatServer> {
  if (!existsSync(`${options.pageDir}/index.html`)) {
    throw new Error(
      `The page is not built (${options.pageDir}/index.html is missing): run \`npx -y pnpm@12.4.2 --filter @lattice-apps/web-chat build\` first.`,
    );
  }
  const web = await openWebChatAgent({
    dataDir: options.dataDir,
    env: options.env ?? process.env,
    ...(options.tools !== undefined ? { tools: options.tools } : {}),
  });
  const app = new Hono();
  app.post("/api/chat", (c) => web.chat.handle(c.req.raw));
  app.get("/api/chat/:id", async (c) => {
    const id = c.req.param("id");
    if (!ID.test(id)) return c.json(notFound("chat"), 404);
    return c.json({ messages: await web.chat.history(id) });
  });
  app.get("/api/runs/:runId/timeline", (c) => {
    const runId = c.req.param("runId");
    const html = ID.test(runId) ? web.timeline(runId) : undefined;
    if (html === undefined) {
      return c.html(
        "<!doctype html><meta charset=utf-8><title>No timeline</title><p>This server has no trace of that run: timelines are kept in memory, for the runs since the server started.</p>",
        404,
      );
    }
    return c.html(html);
  });
  app.all("/api/*", (c) => c.json(notFound("route"), 404));
  app.use("/*", serveStatic({ root: options.pageDir }));
  app.get("*", serveStatic({ root: options.pageDir, path: "index.html" }));
  app.onError((_error, c) =>
    c.json({ error: { code: "internal", message: "The server failed to answer." } }, 500),
  );

  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, port: options.port, hostname: "127.0.0.1" }, () =>
      resolve(started),
    );
    started.once("error", reject);
  }).catch(async (error: unknown) => {
    await web.close();
    throw error;
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    banner: web.banner,
    databasePath: web.databasePath,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      await web.close();
    },
  };
}

function notFound(what: "chat" | "route") {
  return {
    error: {
      code: "not_found",
      message: what === "chat" ? "No such chat id." : "No such route: see the README for the API.",
    },
  };
}
