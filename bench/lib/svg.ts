// Hand-written SVG charts for the bench report: grouped bars and lines (log y axis).
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (v: number): string => (v >= 1000 ? `${Math.round(v / 1000)}k` : v >= 10 ? String(Math.round(v)) : v >= 1 ? v.toFixed(1) : v.toFixed(2));

export interface BarGroup {
  label: string;
  bars: { series: string; value: number }[];
}

export function barChart(title: string, yLabel: string, groups: BarGroup[]): string {
  const series = [...new Set(groups.flatMap((g) => g.bars.map((b) => b.series)))];
  const W = Math.max(640, 120 + groups.length * (series.length * 22 + 30));
  const H = 420;
  const left = 70, top = 40, bottom = 90, right = 20;
  const plotH = H - top - bottom;
  const max = Math.max(1, ...groups.flatMap((g) => g.bars.map((b) => b.value))) * 1.1;
  const groupW = (W - left - right) / Math.max(1, groups.length);
  const barW = Math.min(22, (groupW - 20) / Math.max(1, series.length));
  const out: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`, `<rect width="100%" height="100%" fill="white"/>`, `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${esc(title)}</text>`];
  for (let i = 0; i <= 5; i++) {
    const v = (max * i) / 5;
    const y = top + plotH - (plotH * i) / 5;
    out.push(`<line x1="${left}" x2="${W - right}" y1="${y}" y2="${y}" stroke="#ddd"/><text x="${left - 5}" y="${y + 4}" text-anchor="end">${fmt(v)}</text>`);
  }
  out.push(`<text x="15" y="${top + plotH / 2}" transform="rotate(-90 15 ${top + plotH / 2})" text-anchor="middle">${esc(yLabel)}</text>`);
  groups.forEach((g, gi) => {
    const x0 = left + gi * groupW + (groupW - barW * series.length) / 2;
    g.bars.forEach((b) => {
      const si = series.indexOf(b.series);
      const h = (plotH * b.value) / max;
      const x = x0 + si * barW;
      out.push(`<rect x="${x}" y="${top + plotH - h}" width="${barW - 2}" height="${h}" fill="${COLORS[si % COLORS.length]}"><title>${esc(b.series)}: ${Math.round(b.value)}</title></rect>`);
    });
    out.push(`<text x="${left + gi * groupW + groupW / 2}" y="${top + plotH + 15}" text-anchor="middle">${esc(g.label)}</text>`);
  });
  series.forEach((s, si) => {
    const x = left + (si % 4) * ((W - left) / 4);
    const y = H - 45 + Math.floor(si / 4) * 16;
    out.push(`<rect x="${x}" y="${y - 9}" width="10" height="10" fill="${COLORS[si % COLORS.length]}"/><text x="${x + 14}" y="${y}">${esc(s)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}

export interface Line {
  name: string;
  dashed?: boolean;
  colorIndex: number;
  points: { x: number; y: number }[];
}

export function lineChart(title: string, xLabel: string, yLabel: string, lines: Line[]): string {
  const W = 720, H = 440;
  const left = 70, top = 40, bottom = 110, right = 20;
  const plotW = W - left - right, plotH = H - top - bottom;
  const pts = lines.flatMap((l) => l.points).filter((p) => p.y > 0 && Number.isFinite(p.y));
  const xMax = Math.max(1, ...pts.map((p) => p.x)) * 1.05;
  const lo = Math.floor(Math.log10(Math.max(0.01, Math.min(...pts.map((p) => p.y)))));
  const hi = Math.ceil(Math.log10(Math.max(0.1, ...pts.map((p) => p.y))));
  const X = (x: number): number => left + (plotW * x) / xMax;
  const Y = (y: number): number => top + plotH - (plotH * (Math.log10(Math.max(y, 10 ** lo)) - lo)) / Math.max(1, hi - lo);
  const out: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`, `<rect width="100%" height="100%" fill="white"/>`, `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${esc(title)}</text>`];
  for (let e = lo; e <= hi; e++) {
    const y = Y(10 ** e);
    out.push(`<line x1="${left}" x2="${W - right}" y1="${y}" y2="${y}" stroke="#ddd"/><text x="${left - 5}" y="${y + 4}" text-anchor="end">${fmt(10 ** e)}</text>`);
  }
  for (let i = 0; i <= 5; i++) {
    const v = (xMax * i) / 5;
    out.push(`<text x="${X(v)}" y="${top + plotH + 15}" text-anchor="middle">${fmt(v)}</text>`);
  }
  out.push(`<text x="${left + plotW / 2}" y="${top + plotH + 32}" text-anchor="middle">${esc(xLabel)}</text>`);
  out.push(`<text x="15" y="${top + plotH / 2}" transform="rotate(-90 15 ${top + plotH / 2})" text-anchor="middle">${esc(yLabel)}</text>`);
  lines.forEach((l, li) => {
    const ps = l.points.filter((p) => p.y > 0 && Number.isFinite(p.y));
    const color = COLORS[l.colorIndex % COLORS.length];
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2"${l.dashed === true ? ' stroke-dasharray="5,4"' : ''} points="${ps.map((p) => `${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`).join(' ')}"/>`);
    for (const p of ps) out.push(`<circle cx="${X(p.x).toFixed(1)}" cy="${Y(p.y).toFixed(1)}" r="3" fill="${color}"><title>${esc(l.name)}: ${p.y.toFixed(2)} ms at ${Math.round(p.x)}</title></circle>`);
    const x = left + (li % 3) * (plotW / 3);
    const y = H - 55 + Math.floor(li / 3) * 16;
    out.push(`<line x1="${x}" x2="${x + 20}" y1="${y - 4}" y2="${y - 4}" stroke="${color}" stroke-width="2"${l.dashed === true ? ' stroke-dasharray="5,4"' : ''}/><text x="${x + 25}" y="${y}">${esc(l.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}
