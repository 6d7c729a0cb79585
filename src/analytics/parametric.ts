// The query's text made readable to DuckDB's parser where ClickHouse writes otherwise:
// backtick-quoted names (backtickNames), and the parametric aggregates below.
//
// ClickHouse's parametric aggregates of the quantile family, f(levels)(args):
// `quantile(0.9)(latency)`, `quantilesTDigestMerge(0.75)(latency_p75)`. DuckDB's parser does
// not take two argument lists, so before a query is parsed each such call is written
// `f(args, levels)`, which clickhouse.ts's rewrites read (the value first, then the levels).
// Nothing else of the text changes: strings, quoted names and comments are skipped whole,
// and a name outside the family keeps the parser's error (dialect.ts names the syntax).

const PARAMETRIC = new Set(['quantile', 'quantiles', 'quantileexact', 'quantilesexact', 'quantiletdigest', 'quantilestdigest', 'quantiletdigestmerge', 'quantilestdigestmerge']);

const isNameChar = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_$]/.test(c);

/** The index just past the string, quoted name or comment starting at `i`, or `i` when none starts there. */
export function skipQuoted(text: string, i: number): number {
  const c = text[i];
  if (c === "'" || c === '"') {
    let j = i + 1;
    while (j < text.length && !(text[j] === c && text[j + 1] !== c)) j += text[j] === c ? 2 : 1;
    return j + 1;
  }
  if (text.startsWith('--', i)) {
    const end = text.indexOf('\n', i);
    return end < 0 ? text.length : end + 1;
  }
  if (text.startsWith('/*', i)) {
    const end = text.indexOf('*/', i + 2);
    return end < 0 ? text.length : end + 2;
  }
  return i;
}

/** The index of the `)` that closes the `(` at `open`, or -1 when none does. */
function closing(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; ) {
    const skipped = skipQuoted(text, i);
    if (skipped !== i) {
      i = skipped;
      continue;
    }
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return i;
    i++;
  }
  return -1;
}

const spaceAfter = (text: string, i: number): number => {
  while (i < text.length && /\s/.test(text[i] as string)) i++;
  return i;
};

/**
 * `query` with its text outside strings, quoted names and comments rewritten where `at` says:
 * at position i, the text to write and the position to go on from; undefined keeps the
 * character as it is.
 */
function rewriteOutsideQuoted(query: string, at: (i: number) => [text: string, next: number] | undefined): string {
  let out = '';
  for (let i = 0; i < query.length; ) {
    const skipped = skipQuoted(query, i);
    const rewritten: [string, number] | undefined = skipped !== i ? [query.slice(i, skipped), skipped] : at(i);
    const [text, next] = rewritten ?? [query[i] as string, i + 1];
    out += text;
    i = next;
  }
  return out;
}

/** `query` with every f(levels)(args) of the quantile family written f(args, levels). */
export function unparametric(query: string): string {
  return rewriteOutsideQuoted(query, (i) => {
    if (!isNameChar(query[i]) || isNameChar(query[i - 1])) return undefined;
    let end = i;
    while (isNameChar(query[end])) end++;
    const name = query.slice(i, end);
    const open1 = spaceAfter(query, end);
    const close1 = PARAMETRIC.has(name.toLowerCase()) && query[open1] === '(' && query[i - 1] !== '.' ? closing(query, open1) : -1;
    const open2 = close1 < 0 ? -1 : spaceAfter(query, close1 + 1);
    const close2 = open2 >= 0 && query[open2] === '(' ? closing(query, open2) : -1;
    if (close2 < 0) return [name, end];
    return [`${name}(${unparametric(query.slice(open2 + 1, close2))}, ${query.slice(open1 + 1, close1)})`, close2 + 1];
  });
}

/**
 * ClickHouse's `name` (in backticks, a doubled backtick inside being one) as DuckDB's "name":
 * the same identifier (`limit`, a column of ratelimits_v1 and a keyword of both). Strings,
 * double-quoted names and comments are left as they are; an unclosed backtick too (the
 * parser's error names it).
 */
export function backtickNames(query: string): string {
  return rewriteOutsideQuoted(query, (i) => {
    if (query[i] !== '`') return undefined;
    let name = '';
    let j = i + 1;
    for (; j < query.length; j++) {
      if (query[j] !== '`') name += query[j];
      else if (query[j + 1] === '`') name += query[j++];
      else break;
    }
    if (j >= query.length) return [query.slice(i), query.length];
    return [`"${name.replaceAll('"', '""')}"`, j + 1];
  });
}
