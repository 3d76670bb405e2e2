import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ToolContext, ToolHandlerResult } from "../index.js";
import { builtinTools } from "./builtin-tools.js";
import { isPublicAddress } from "./public-address.js";
import { type WebFetchToolOptions, webFetchTool } from "./web-fetch-tool.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

let server: Server;
let port: number;
const hosts: string[] = [];
let redirectBytes = 0;
beforeAll(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    hosts.push(String(request.headers.host));
    const path = request.url ?? "/";
    if (path === "/page") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(
        '<html><head><title>t</title><style>p{}</style><script>alert(1)</script></head><body><h1>Docs</h1><p>Read <a href="/a">this</a>.</p><ul><li>one</li></ul></body></html>',
      );
    } else if (path === "/text") {
      response.writeHead(200, { "content-type": "text/plain" });
      response.end("plain words");
    } else if (path === "/big") {
      response.writeHead(200, { "content-type": "text/plain" });
      response.end("x".repeat(50_000));
    } else if (path === "/image") {
      response.writeHead(200, { "content-type": "image/png" });
      response.end(PNG);
    } else if (path === "/zip") {
      response.writeHead(200, { "content-type": "application/zip" });
      response.end(Buffer.from([80, 75, 3, 4]));
    } else if (path === "/to-metadata") {
      response.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
      response.end();
    } else if (path === "/to-text") {
      response.writeHead(301, { location: "/text" });
      response.end();
    } else if (path === "/loop") {
      response.writeHead(302, { location: "/loop" });
      response.end();
    } else if (path === "/to-file") {
      response.writeHead(302, { location: "file:///etc/passwd" });
      response.end();
    } else if (path === "/slow") {
      setTimeout(() => response.end("late"), 2_000);
    } else if (path === "/deep") {
      response.writeHead(200, { "content-type": "text/html" });
      response.end(`${"<div>".repeat(100_000)}deep words${"</div>".repeat(100_000)}`);
    } else if (path === "/upgrade") {
      response.socket?.write(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
      );
    } else if (path === "/trickle") {
      response.writeHead(200, { "content-type": "text/plain" });
      const timer = setInterval(() => response.write("x"), 20);
      response.once("close", () => clearInterval(timer));
    } else if (path === "/endless-redirect") {
      response.writeHead(302, { location: "/text" });
      const timer = setInterval(() => {
        redirectBytes += 65_536;
        response.write(Buffer.alloc(65_536));
      }, 1);
      response.once("close", () => clearInterval(timer));
    } else if (path === "/gzip") {
      response.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
      response.end(Buffer.from([31, 139, 8, 0]));
    } else if (path === "/bad-location") {
      response.writeHead(302, { location: "http://[::1" });
      response.end();
    } else if (path === "/missing") {
      response.writeHead(404, { "content-type": "text/plain" });
      response.end("no such page");
    } else {
      response.writeHead(200, { "content-type": "text/plain" });
      response.end(`path ${path}`);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const context = (): ToolContext =>
  ({
    signal: new AbortController().signal,
    toolUseId: "t",
    context: undefined,
  }) as unknown as ToolContext;

async function fetchWith(options: WebFetchToolOptions, url: string): Promise<ToolHandlerResult> {
  const tool = webFetchTool(options);
  return (await tool.handler({ url }, context())) as ToolHandlerResult;
}

async function refusal(options: WebFetchToolOptions, url: string): Promise<string> {
  const tool = webFetchTool(options);
  try {
    await tool.handler({ url }, context());
  } catch (error) {
    return `${(error as { code: string }).code}: ${(error as Error).message}`;
  }
  throw new Error(`${url} was fetched`);
}

const local = { allowHosts: ["127.0.0.1"] };

describe("WebFetch (T41)", () => {
  it("T41: HTML comes back as Markdown under the final URL and content type; scripts and styles are dropped", async () => {
    const result = await fetchWith(local, `http://127.0.0.1:${port}/page`);
    const text = result.content as string;
    expect(text).toContain(`URL: http://127.0.0.1:${port}/page`);
    expect(text).toContain("Content-Type: text/html; charset=utf-8");
    expect(text).toContain("# Docs");
    expect(text).toContain("Read [this](/a).");
    expect(text).toMatch(/\*\s+one/);
    expect(text).not.toContain("alert");
    expect(text).not.toContain("p{}");
    expect(result.isError).toBe(false);
  });

  it("T41: text as is, images as image blocks, a 404 as an error result, binary types refused", async () => {
    expect(await fetchWith(local, `http://127.0.0.1:${port}/text`)).toMatchObject({
      content: expect.stringContaining("plain words"),
    });
    const image = await fetchWith(local, `http://127.0.0.1:${port}/image`);
    expect(image.content).toEqual([
      { type: "text", text: expect.stringContaining("Content-Type: image/png") },
      {
        type: "image",
        source: { type: "base64", media_type: "image/png", data: PNG.toString("base64") },
      },
    ]);
    const missing = await fetchWith(local, `http://127.0.0.1:${port}/missing`);
    expect(missing).toMatchObject({
      isError: true,
      content: expect.stringContaining("Status: 404"),
    });
    expect(await refusal(local, `http://127.0.0.1:${port}/zip`)).toMatch(
      /^binary_content: .*application\/zip/,
    );
  });

  it("T41: bytes, characters, time and redirects are bounded", async () => {
    const cut = await fetchWith({ ...local, maxBytes: 1_000 }, `http://127.0.0.1:${port}/big`);
    expect(cut.content).toContain("Cut at 1000 bytes.");
    expect((cut.content as string).split("\n\n")[1]).toBe("x".repeat(1_000));
    const short = await fetchWith({ ...local, maxCharacters: 100 }, `http://127.0.0.1:${port}/big`);
    expect(short.content).toContain("[… cut at 100 characters]");
    expect(await refusal({ ...local, timeoutMs: 200 }, `http://127.0.0.1:${port}/slow`)).toMatch(
      /^fetch_timed_out: .*200 ms/,
    );
    expect(await refusal(local, `http://127.0.0.1:${port}/loop`)).toMatch(
      /^too_many_redirects: .*more than 5 times/,
    );
    const followed = await fetchWith(local, `http://127.0.0.1:${port}/to-text`);
    expect(followed.content).toContain(`URL: http://127.0.0.1:${port}/text`);
  });

  it("T41: WebFetch is a built-in, concurrency-safe, configured through builtinTools({ webFetch })", async () => {
    const [tool] = builtinTools({ tools: ["WebFetch"], cwd: process.cwd(), webFetch: local });
    expect(tool?.name).toBe("WebFetch");
    expect(tool?.kind).toBe("builtin");
    expect(tool?.isConcurrencySafe?.({ url: "https://example.com" })).toBe(true);
    expect(() =>
      builtinTools({
        tools: ["WebFetch"],
        cwd: process.cwd(),
        webFetch: { allowHost: [] } as never,
      }),
    ).toThrow('unknown option "webFetch.allowHost"');
  });
});

describe("hostile servers (T41)", () => {
  it("T41: a page nested 100,000 deep comes back as plain text, without blocking the process", async () => {
    const started = performance.now();
    const result = await fetchWith(local, `http://127.0.0.1:${port}/deep`);
    expect(result.content).toContain("shown as plain text");
    expect(result.content).toContain("deep words");
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("T41: a server that switches protocols, or trickles its body past the deadline, ends the call with an error", async () => {
    expect(
      await refusal({ ...local, timeoutMs: 2_000 }, `http://127.0.0.1:${port}/upgrade`),
    ).toMatch(/^fetch_failed: .*switched protocols/);
    expect(await refusal({ ...local, timeoutMs: 300 }, `http://127.0.0.1:${port}/trickle`)).toMatch(
      /^fetch_timed_out/,
    );
    // The call's own abort is an abort, not a timeout.
    const controller = new AbortController();
    const tool = webFetchTool(local);
    const pending = tool.handler({ url: `http://127.0.0.1:${port}/trickle` }, {
      ...context(),
      signal: controller.signal,
    } as ToolContext);
    setTimeout(() => controller.abort(), 100);
    await expect(pending).rejects.toMatchObject({ code: "aborted" });
  });

  it("T41: a redirect's body is not read, a resolver that never answers meets the deadline, compressed and unparseable answers are refused", async () => {
    redirectBytes = 0;
    expect((await fetchWith(local, `http://127.0.0.1:${port}/endless-redirect`)).content).toContain(
      "plain words",
    );
    const after = redirectBytes;
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The server stops writing once the connection is closed: a few writes in flight at most.
    expect(redirectBytes - after).toBeLessThan(20 * 65_536);
    const never = () => new Promise<never>(() => undefined);
    expect(await refusal({ resolve: never, timeoutMs: 200 }, "http://slow-dns.example/")).toMatch(
      /^fetch_timed_out/,
    );
    expect(await refusal(local, `http://127.0.0.1:${port}/gzip`)).toMatch(
      /^binary_content: .*compressed \(gzip\)/,
    );
    expect(await refusal(local, `http://127.0.0.1:${port}/bad-location`)).toMatch(
      /^invalid_url: .*redirected to/,
    );
  });
});

describe("no server-side request forgery (T42)", () => {
  it("T42: a server on 127.0.0.1 is refused by default and fetched when allowHosts names it", async () => {
    const message = await refusal({}, `http://127.0.0.1:${port}/text`);
    expect(message).toMatch(
      /^address_refused: WebFetch: 127\.0\.0\.1 is a private, local or reserved address/,
    );
    expect(message).toContain("allowHosts");
    expect((await fetchWith(local, `http://127.0.0.1:${port}/text`)).content).toContain(
      "plain words",
    );
    expect(
      (await fetchWith({ allowPrivateNetwork: true }, `http://127.0.0.1:${port}/text`)).content,
    ).toContain("plain words");
  });

  it("T42: a redirect to the cloud metadata address is refused, even from an allowed host", async () => {
    const message = await refusal(local, `http://127.0.0.1:${port}/to-metadata`);
    expect(message).toMatch(
      /^address_refused: .*169\.254\.169\.254.*redirected to http:\/\/169\.254\.169\.254\/latest\/meta-data\//,
    );
    expect(await refusal(local, `http://127.0.0.1:${port}/to-file`)).toMatch(
      /^url_refused: .*file: URLs are refused/,
    );
  });

  it("T42: a name that resolves to a private address is refused; the connection goes to the address checked, with one lookup", async () => {
    const lookups: string[] = [];
    const resolve = async (hostname: string) => {
      lookups.push(hostname);
      // A rebinding resolver: a private address first, a public one after.
      return lookups.length === 1
        ? [{ address: "10.0.0.7", family: 4 }]
        : [{ address: "93.184.216.34", family: 4 }];
    };
    expect(await refusal({ resolve }, "http://internal.example/secrets")).toMatch(
      /^address_refused: WebFetch: internal\.example resolves to a private, local or reserved address/,
    );
    // One public and one private answer: refused (every address is checked).
    const mixed = async () => [
      { address: "93.184.216.34", family: 4 },
      { address: "192.168.1.1", family: 4 },
    ];
    const mixedRefusal = await refusal({ resolve: mixed }, "http://mixed.example/");
    expect(mixedRefusal).toMatch(/^address_refused: WebFetch: mixed\.example resolves to/);
    // The refusal does not tell the model the private network's addresses.
    expect(mixedRefusal).not.toContain("192.168.1.1");
    // An allowed name is connected to the address it resolved to, once: the pinned lookup.
    lookups.length = 0;
    hosts.length = 0;
    const pinned = async (hostname: string) => {
      lookups.push(hostname);
      return [{ address: "127.0.0.1", family: 4 }];
    };
    const result = await fetchWith(
      { resolve: pinned, allowHosts: ["docs.internal.example"] },
      `http://docs.internal.example:${port}/text`,
    );
    expect(result.content).toContain("plain words");
    expect(lookups).toEqual(["docs.internal.example"]);
    expect(hosts).toEqual([`docs.internal.example:${port}`]);
  });

  it("T42: file:, data:, ftp: URLs and URLs with credentials are refused", async () => {
    expect(await refusal({}, "file:///etc/passwd")).toMatch(
      /^url_refused: WebFetch: file: URLs are refused/,
    );
    expect(await refusal({}, "data:text/plain,hello")).toMatch(/^url_refused: .*data:/);
    expect(await refusal({}, "ftp://example.com/x")).toMatch(/^url_refused: .*ftp:/);
    expect(await refusal({}, "http://user:pass@example.com/")).toMatch(/credentials/);
    expect(await refusal({}, "not a url")).toMatch(/^invalid_url/);
  });

  it("T42: loopback, private, link-local, multicast and metadata addresses, IPv4, IPv6 and IPv4-mapped, are not public", async () => {
    for (const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.0.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "255.255.255.255",
      "::1",
      "::",
      "fe80::1",
      "fc00::1",
      "fd00:ec2::254",
      "ff02::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:a9fe:a9fe",
      "64:ff9b::a9fe:a9fe",
      "::7f00:1",
      "::a9fe:a9fe",
      "::ffff:0:7f00:1",
      "0:0:0:0:0:0:127.0.0.1",
      "3fff::1",
      "2001:2::1",
      "5f00::1",
      "100::1",
    ]) {
      expect([address, isPublicAddress(address)]).toEqual([address, false]);
    }
    for (const address of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) {
      expect([address, isPublicAddress(address)]).toEqual([address, true]);
    }
    // The URL parser's other spellings of loopback reach the check as 127.0.0.1 or [::...].
    for (const url of [
      "http://2130706433/",
      "http://0x7f.1/",
      "http://[::ffff:127.0.0.1]/",
      "http://[::1]/",
      "http://localhost./",
    ]) {
      const resolve = async () => [{ address: "127.0.0.1", family: 4 }];
      expect(await refusal({ resolve }, url)).toMatch(/^address_refused/);
    }
  });
});
