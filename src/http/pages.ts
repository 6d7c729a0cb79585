// The GET endpoints: liveness, metrics, the OpenAPI document and one short page per
// error type (the target of every error's `type` URL).
import { CATALOGUE, ERROR_NAMES, errorIdentifier, errorPath } from '../errors/catalogue.js';

export interface Page {
  status: number;
  contentType: string;
  body: string;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const ERROR_PAGES: ReadonlyMap<string, Page> = new Map<string, Page>(
  ERROR_NAMES.map((name) => {
    const e = CATALOGUE[name];
    const body = `<!doctype html><html><head><meta charset="utf-8"><title>${name} — keyward</title></head><body>` +
      `<h1>${escapeHtml(name)}</h1><p><b>${e.status} ${escapeHtml(e.title)}</b> · <code>${errorIdentifier(name)}</code></p>` +
      `<p>${escapeHtml(e.when)}</p><p>The error's <code>detail</code> says what was wrong with your request; 400s list each problem in <code>errors</code>.</p></body></html>\n`;
    return [errorPath(name), { status: 200, contentType: 'text/html; charset=utf-8', body }];
  }),
);

export function errorPage(path: string): Page | undefined {
  return ERROR_PAGES.get(path);
}
