/**
 * Control characters (C0, DEL, C1), bidirectional overrides and isolates, and line separators:
 * what a terminal acts on (an escape sequence clears the screen or sets the title) or what
 * reorders the text a reader sees.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its purpose.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/**
 * Text from a trace made safe to print in a message: each control character, bidi override
 * and line separator is written as a `\uXXXX` escape, so an error message shows what the line
 * holds and the terminal acts on none of it.
 *
 * @param text - Any text, for example a line of a trace.
 * @returns The same text, with those characters escaped.
 */
export function printableText(text: string): string {
  return text.replace(
    UNPRINTABLE,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
