// POST over a caller-owned keep-alive agent (load and concurrency tests spread requests over
// many sockets, so both serving threads get traffic).
import * as http from 'node:http';

export function postWithAgent(agent: http.Agent, url: string, rootKey: string, body: unknown): Promise<{ status: number; text: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      agent,
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${rootKey}`, 'Content-Length': Buffer.byteLength(payload) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}
