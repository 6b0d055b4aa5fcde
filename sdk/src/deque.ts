/** A double-ended queue on a growable ring: O(1) at both ends, no array shifting. */
export class Deque<T> {
  private items: (T | undefined)[] = new Array<T | undefined>(16);
  private head = 0;
  private length = 0;

  get size(): number {
    return this.length;
  }

  pushBack(item: T): void {
    if (this.length === this.items.length) this.grow();
    this.items[(this.head + this.length) & (this.items.length - 1)] = item;
    this.length++;
  }

  pushFront(item: T): void {
    if (this.length === this.items.length) this.grow();
    this.head = (this.head - 1) & (this.items.length - 1);
    this.items[this.head] = item;
    this.length++;
  }

  popFront(): T | undefined {
    if (this.length === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & (this.items.length - 1);
    this.length--;
    return item;
  }

  peekFront(): T | undefined {
    return this.length === 0 ? undefined : this.items[this.head];
  }

  /** Items front to back. */
  toArray(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.length; i++) out.push(this.items[(this.head + i) & (this.items.length - 1)]!);
    return out;
  }

  private grow(): void {
    const items = this.toArray() as (T | undefined)[];
    items.length = this.items.length * 2; // stays a power of two, so `& (length - 1)` wraps
    this.items = items;
    this.head = 0;
  }
}
