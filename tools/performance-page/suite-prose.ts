/** The hand-written text of docs/bench/suites.md: the page's introduction and each suite's. */
export interface SuiteProse {
  /** Everything before the first `## ` heading. */
  readonly intro: string;
  /** By suite name: the heading's title and the text under it. */
  readonly suites: ReadonlyMap<string, { readonly title: string; readonly text: string }>;
}

/**
 * Reads docs/bench/suites.md: a `## <suite>: <title>` heading per suite (the suite as the bench
 * names it in its rows), the text under it up to the next heading.
 */
export function parseSuiteProse(markdown: string): SuiteProse {
  const [intro = '', ...sections] = markdown.split(/^## /m);
  const suites = new Map<string, { title: string; text: string }>();
  for (const section of sections) {
    const newline = section.indexOf('\n');
    const heading = newline < 0 ? section : section.slice(0, newline);
    const match = /^([\w+.-]+):\s*(.*)$/.exec(heading.trim());
    if (!match) throw new Error(`docs/bench/suites.md: heading "## ${heading}" is not "## <suite>: <title>"`);
    const text = newline < 0 ? '' : section.slice(newline + 1).trim();
    suites.set(match[1] as string, { title: (match[2] as string).trim(), text });
  }
  return { intro: intro.trim(), suites };
}
