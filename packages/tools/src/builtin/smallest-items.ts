/**
 * Keeps the `limit` smallest items offered (by `compare`), and counts every item offered: a
 * sorted top-k in memory proportional to `limit` (at most twice it), whatever the number of
 * items. Internal (LS keeps the first names, Glob the newest files, the walk one pass of a
 * large directory).
 *
 * Items are buffered; when the buffer holds twice `limit`, it is sorted and cut to `limit`,
 * and from then on an item not smaller than the largest kept is refused at once. For fewer
 * than `2 * limit` items this is one sort, as if every item had been kept.
 */
export class SmallestItems<Item> {
  /** How many items were offered in all. */
  offered = 0;
  readonly #limit: number;
  readonly #compare: (a: Item, b: Item) => number;
  #items: Item[] = [];
  /** The largest item kept after the last cut; only smaller ones can still be kept. */
  #bound: Item | undefined;

  /**
   * @param limit - The most items kept (a positive integer).
   * @param compare - Negative when `a` comes before `b`, as for `Array.prototype.sort`.
   */
  constructor(limit: number, compare: (a: Item, b: Item) => number) {
    this.#limit = limit;
    this.#compare = compare;
  }

  /** Offers one item: kept when it is among the `limit` smallest so far. */
  offer(item: Item): void {
    this.offered += 1;
    if (this.#bound !== undefined && this.#compare(item, this.#bound) >= 0) return;
    this.#items.push(item);
    if (this.#items.length >= 2 * this.#limit) this.#cut();
  }

  /** The kept items, smallest first. */
  sorted(): Item[] {
    this.#cut();
    return [...this.#items];
  }

  #cut(): void {
    this.#items.sort(this.#compare);
    if (this.#items.length > this.#limit) {
      this.#items.length = this.#limit;
      this.#bound = this.#items[this.#limit - 1];
    }
  }
}
