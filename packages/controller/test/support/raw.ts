/** Raw sockets, for what an HTTP client library would refuse to send. */
import { connect, type Socket } from 'node:net';

/** Connects, writes `head` (and optionally more), collects everything until the server closes. */
export function exchangeRaw(
  url: string,
  head: string,
  feed?: (socket: Socket) => void,
): Promise<{ text: string; closed: boolean }> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(target.port), target.hostname);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ text, closed: true }));
    socket.on('connect', () => {
      socket.write(head);
      feed?.(socket);
    });
  });
}

/** Opens a socket and leaves it open; resolves once connected. */
export function openSocket(url: string): Promise<Socket> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Status code of the first response in a raw exchange. */
export function statusOf(text: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
}

/** JSON body of the first response in a raw exchange. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function bodyOf(text: string): any {
  const start = text.indexOf('\r\n\r\n');
  const rest = text.slice(start + 4);
  const end = rest.indexOf('HTTP/1.1 ');
  return JSON.parse(end < 0 ? rest : rest.slice(0, end));
}
