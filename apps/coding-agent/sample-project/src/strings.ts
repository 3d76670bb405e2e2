/** Turns a title into a URL slug: "Hello World" becomes "hello-world". */
export function slugify(text: string): string {
  // TODO: lower-case the result.
  return text.trim().replace(/\s+/g, "-");
}
