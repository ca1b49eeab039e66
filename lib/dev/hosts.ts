/**
 * @module
 * The hosts `deno task dev` answers. It listens on loopback, but a page on any site can reach it
 * there by DNS rebinding: `evil.example` first resolves to the attacker's server, then to
 * 127.0.0.1, and the page - now same-origin with `http://evil.example:8000` - reads the dev
 * server's answers with `Host: evil.example:8000`: the browser build's source maps (the app's
 * sources), the error page (a server's stderr), the event stream, and every page and action of
 * the app, whose own check of `Origin` sees the same host. So the dev server answers, as Vite does
 * since CVE-2025-24010, only a `Host` no DNS name can be made to match - `localhost`,
 * `*.localhost` (browsers resolve those to loopback themselves) and IP addresses - and the hosts
 * of `APP_ORIGIN` and `ALLOWED_HOSTS`; any other gets 400 before anything runs.
 */

/** Whether the dev server answers a request for the URL `url` (Deno's, with the `Host` as sent). */
export function devHosts(configured: string[] = []): (url: string) => boolean {
  const hosts = new Set(configured.map((host) => host.toLowerCase()));
  return (url) => {
    const parsed = URL.parse(url);
    if (!parsed) return false;
    const name = parsed.hostname;
    return name === "localhost" || name.endsWith(".localhost") || isIpAddress(name) ||
      hosts.has(parsed.host);
  };
}

/** The URL parser's IPv4 (always four decimal numbers, whatever was written) or `[IPv6]`. */
function isIpAddress(hostname: string): boolean {
  return hostname.startsWith("[") || /^\d+\.\d+\.\d+\.\d+$/.test(hostname);
}

/** What a request for another host gets: the settings that would let it through. */
export const UNKNOWN_DEV_HOST = "Bad Request: unknown host; deno task dev answers localhost, " +
  "IP addresses and the hosts of APP_ORIGIN and ALLOWED_HOSTS";
