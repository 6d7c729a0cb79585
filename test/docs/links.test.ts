// Every relative link in README.md, CONTRIBUTING.md and docs/*.md names a file that exists,
// and every #anchor (in-page, or file.md#anchor) names a heading of its target, slugged as
// GitHub does. Absolute http(s) and mailto links are not fetched.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const DOCS = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The lines of a Markdown text outside fenced code blocks. */
function proseLines(text: string): string[] {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const opening = /^\s*(```+|~~~+)/.exec(line);
    if (opening !== null) {
      const marker = opening[1] as string;
      if (fence === undefined) fence = marker[0] as string;
      else if (marker[0] === fence) fence = undefined;
      continue;
    }
    if (fence === undefined) out.push(line);
  }
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation removed, each space a '-'. */
function slug(heading: string): string {
  const text = heading
    .replace(/<[^>]*>/g, '') // inline HTML
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/[`*]/g, ''); // code and emphasis markers
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown text's headings, with GitHub's -1, -2 … for repeated ones. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of proseLines(text)) {
    const m = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (m === null) continue;
    const base = slug(m[1] as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The link targets of a Markdown text, outside code (fenced blocks and inline spans). */
function linkTargets(text: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(text)) {
    const prose = line.replace(/(`+)[\s\S]*?\1/g, '');
    for (const m of prose.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1] as string);
  }
  return targets;
}

/** What is wrong with each link of `text`, the content of the repository file `file`. */
function brokenLinks(file: string, text: string): string[] {
  const problems: string[] = [];
  for (const target of linkTargets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    const hash = target.indexOf('#');
    const path = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    if (path === '') {
      if (anchor !== undefined && !anchors(text).has(anchor)) problems.push(`${target}: no heading with the anchor #${anchor}`);
      continue;
    }
    const resolved = resolve(ROOT, dirname(file), path);
    if (relative(ROOT, resolved).startsWith('..')) {
      problems.push(`${target}: outside the repository`);
      continue;
    }
    if (!existsSync(resolved)) {
      problems.push(`${target}: no such file`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!resolved.endsWith('.md') || statSync(resolved).isDirectory()) {
      problems.push(`${target}: an anchor into a file that is not Markdown`);
      continue;
    }
    if (!anchors(readFileSync(resolved, 'utf8')).has(anchor)) problems.push(`${target}: no heading with the anchor #${anchor}`);
  }
  return problems;
}

describe('links', () => {
  it('the documents to check are there', () => {
    expect(DOCS).toContain('docs/architecture.md');
    expect(DOCS.length).toBeGreaterThan(3);
  });

  for (const file of DOCS) {
    it(`every relative link and anchor of ${file} resolves`, () => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(linkTargets(text).length, 'links found').toBeGreaterThan(0);
      expect(brokenLinks(file, text)).toEqual([]);
    });
  }

  it('finds broken paths and anchors, and only those', () => {
    const text = [
      '# Top heading',
      '## Second: the `code` part',
      '## Second: the `code` part',
      'Good: [readme](README.md), [section](README.md#configuration), [here](#top-heading),',
      '[again](#second-the-code-part-1), [dir](docs/), [web](https://example.com/x#y), `[code](nowhere.md)`.',
      'Bad: [gone](nowhere.md), [anchor](README.md#no-such-heading), [here](#missing),',
      '[case](#Top-Heading), [up](../outside.md), ![img](missing.svg).',
      '```',
      '[fenced](also-nowhere.md)',
      '```',
    ].join('\n');
    expect(brokenLinks('example.md', text)).toEqual([
      'nowhere.md: no such file',
      'README.md#no-such-heading: no heading with the anchor #no-such-heading',
      '#missing: no heading with the anchor #missing',
      '#Top-Heading: no heading with the anchor #Top-Heading',
      '../outside.md: outside the repository',
      'missing.svg: no such file',
    ]);
  });

  it('slugs headings as GitHub does', () => {
    expect(slug("A request's path")).toBe('a-requests-path');
    expect(slug('Host setting: write-back throttling')).toBe('host-setting-write-back-throttling');
    expect(slug('`ratelimits.limit` and multiLimit')).toBe('ratelimitslimit-and-multilimit');
    expect(slug('KEYWARD_WRITE_MAP (on/off)')).toBe('keyward_write_map-onoff');
    expect(slug('Links: [docs](docs/) & more')).toBe('links-docs--more');
  });
});
