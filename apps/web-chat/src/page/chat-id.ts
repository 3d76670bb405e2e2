/** The query parameter that names the chat: `?chat=<id>`. */
const PARAMETER = "chat";

/**
 * The chat the page shows: the one in the address (`?chat=<id>`), else a new one, written
 * into the address so that a reload (or a bookmark) continues it.
 */
export function currentChatId(): string {
  const url = new URL(window.location.href);
  const id = url.searchParams.get(PARAMETER);
  if (id !== null && /^[\w-]{1,128}$/.test(id)) return id;
  const fresh = crypto.randomUUID();
  url.searchParams.set(PARAMETER, fresh);
  window.history.replaceState(null, "", url);
  return fresh;
}

/** The address of a new chat. */
export function newChatHref(): string {
  const url = new URL(window.location.href);
  url.searchParams.set(PARAMETER, crypto.randomUUID());
  return url.pathname + url.search;
}
