import { availableParallelism } from 'node:os'
import * as v from 'valibot'
import { missingUpstream, upstreamList } from './upstream-list.js'
import { otlpHeaders } from './otlp-headers.js'
import { backupConflict, backupInterval, backupKeep } from './backup-settings.js'
import { trustedProxies } from './trusted-proxies.js'
import { aliasWithoutModel, modelAliases } from './model-aliases.js'
import { pricesFile } from './prices-file.js'

const int = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, 'must be a whole number'),
    v.transform(Number),
    v.integer(),
    v.minValue(min),
    v.maxValue(max)
  )
const port = int(0, 65535)
const redisUrl = v.pipe(
  v.string(),
  v.regex(/^rediss?:\/\/./, 'must be a redis:// or rediss:// URL'),
  v.url('must be a URL')
)
const workers = v.union(
  [
    v.pipe(
      v.string(),
      v.picklist(['auto']),
      v.transform(() => availableParallelism())
    ),
    int(1, 1024),
  ],
  'must be a whole number from 1 to 1024 or "auto"'
)
const text = v.pipe(v.string(), v.minLength(1, 'must not be empty'))
// smtp://user:pass@host:port (STARTTLS when the server offers it) or smtps:// (TLS from the start).
const smtpUrl = v.pipe(
  v.string(),
  v.regex(/^smtps?:\/\/[^/?#]/, 'must be an smtp:// or smtps:// URL'),
  v.check((s) => URL.canParse(s) && new URL(s).hostname !== '', 'must be a URL with a host and a numeric port')
)
// An address, or a name and an address: `studio@example.com`, `Studio <studio@example.com>`.
const mailFrom = v.pipe(
  v.string(),
  v.regex(
    /^(?:[^<>\r\n"]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/,
    'must be an address (a@example.com) or a name and an address (Studio <a@example.com>)'
  )
)
const url = v.pipe(v.string(), v.url('must be a URL'))
const quota = v.union(
  [
    v.pipe(
      v.string(),
      v.picklist(['unlimited']),
      v.transform(() => null)
    ),
    int(0, 2 ** 31 - 1),
  ],
  'must be a whole number or "unlimited"'
)

// The sections of docs/configuration.md, in its order; every setting is in one.
export const settingGroups = {
  listener: 'Listener',
  database: 'Database and backups',
  limits: 'Limits and quotas',
  ai: 'AI completions',
  events: 'Webhooks and mail',
  dashboard: 'Dashboard and audit log',
  scaling: 'Scaling out',
  operations: 'Logs, metrics and tracing',
} as const

interface Setting {
  readonly schema: v.GenericSchema<string, unknown>
  readonly default?: string
  readonly doc: string
  readonly group: keyof typeof settingGroups
  // What the manual says of it when `doc`, the short line `studio --help` prints, leaves something out.
  readonly manual?: string
  // The manual's default for a setting without one: what applies when it is unset.
  readonly shownDefault?: string
}

// Every setting the service reads, in one table: its parser, its default, its doc (`studio --help` prints it) and its
// place in docs/configuration.md (`npm run gen:docs` writes it).
export const settings = {
  PORT: {
    schema: port,
    default: '8080',
    doc: 'TCP port of the API listener (0 picks a free one)',
    group: 'listener',
    manual:
      'TCP port of the API listener (0 picks a free one); a taken one stops `studio serve` before the ' +
      'database is touched, with one line saying so (exit code 2)',
  },
  HOST: {
    schema: text,
    default: '127.0.0.1',
    doc: 'address of the API listener (0.0.0.0 for every interface)',
    group: 'listener',
  },
  DATABASE_URL: {
    schema: url,
    doc: 'PostgreSQL connection URL; unset → embedded PostgreSQL in STUDIO_DATA_DIR',
    group: 'database',
  },
  STUDIO_DATA_DIR: {
    schema: text,
    default: './data',
    doc: 'where the embedded database and its unix socket live',
    group: 'database',
  },
  STUDIO_BACKUP_DIR: {
    schema: text,
    doc: 'embedded database: the server writes a backup here every STUDIO_BACKUP_INTERVAL; unset → none',
    group: 'database',
    manual:
      'embedded database only: the server writes a backup here every `STUDIO_BACKUP_INTERVAL` (see ' +
      '"Backups and restore"); unset → no scheduled backups. With `DATABASE_URL` it is refused at start',
  },
  STUDIO_BACKUP_INTERVAL: {
    schema: backupInterval,
    default: '24h',
    doc: 'time between two scheduled backups (e.g. 24h, 6h, 30m)',
    group: 'database',
    manual: 'time between two scheduled backups: a whole number and `s`, `m`, `h` or `d` (at least 60 s: `1m`, `90s`)',
  },
  STUDIO_BACKUP_KEEP: {
    schema: backupKeep,
    default: '7',
    doc: 'scheduled backups kept in STUDIO_BACKUP_DIR; older ones are deleted',
    group: 'database',
    manual: 'scheduled backups kept in `STUDIO_BACKUP_DIR`; older ones are deleted after each new one',
  },
  STUDIO_DB_POOL: {
    schema: int(1, 100),
    default: '20',
    doc: 'connections in the PostgreSQL pool',
    group: 'database',
    manual: 'connections in the PostgreSQL pool (at most 4 in embedded mode)',
  },
  STUDIO_DB_TIMEOUT_MS: {
    schema: int(100, 600_000),
    default: '1500',
    doc: 'a query the database has not answered within this long fails its request with 503',
    group: 'database',
    manual:
      'a query the database has not answered within this long fails its request with 503 ' +
      '`service_unavailable` (a frozen database or a dead network cannot hang requests; `POST ' +
      '/api/v1/leads` waits at most this long for its batch or its own transaction)',
  },
  LOG_LEVEL: {
    schema: v.picklist(['debug', 'info', 'warn', 'error', 'silent']),
    default: 'info',
    doc: 'debug, info, warn, error or silent',
    group: 'operations',
  },
  LOG_FORMAT: {
    schema: v.picklist(['json', 'pretty', 'auto']),
    default: 'auto',
    doc: 'json, pretty (one line for people: time, level, message, key=value) or auto: pretty on a terminal',
    group: 'operations',
    manual:
      '`json` (a JSON object a line), `pretty` (a line for people: time, level, message and `key=value` fields) or ' +
      '`auto`: pretty when stdout is a terminal, else JSON (see "Logs")',
  },
  STUDIO_BODY_LIMIT: {
    schema: int(1024, 64 * 1024 * 1024),
    default: '1048576',
    doc: 'largest request body in bytes (413 above)',
    group: 'listener',
  },
  STUDIO_HEADERS_TIMEOUT_MS: {
    schema: int(100, 600_000),
    default: '10000',
    doc: 'a client must send all request headers within this long (408; at most the request timeout)',
    group: 'listener',
    manual:
      'a client must send all request headers within this long, else 408 and the connection is closed (at ' +
      'most the request timeout)',
  },
  STUDIO_REQUEST_TIMEOUT_MS: {
    schema: int(100, 3_600_000),
    default: '30000',
    doc: 'a client must send the whole request, body included, within this long (408)',
    group: 'listener',
    manual:
      'a client must send the whole request, body included, within this long, else 408 and the connection ' +
      'is closed',
  },
  STUDIO_RATE_LIMIT: {
    schema: int(1, 1_000_000_000),
    default: '300',
    doc: 'requests per key in any rolling 60 s window',
    group: 'limits',
  },
  STUDIO_LEAD_KEY_ADDRESS_LIMIT: {
    schema: int(1, 1e6),
    default: '10',
    doc: 'lead key requests per address per 60 s',
    group: 'limits',
    manual:
      'requests per lead key (a key with web origins, see "Lead keys for web pages") and client address in ' +
      "any rolling 60 s, counted in each process's memory; over it, 429 `rate_limited`",
  },
  STUDIO_TRUSTED_PROXIES: {
    schema: trustedProxies,
    doc: 'reverse proxies whose X-Forwarded-For is believed',
    group: 'listener',
    manual:
      'reverse proxies in front of the service, as addresses and CIDR ranges separated by commas ' +
      '(`127.0.0.1`, `10.0.0.0/8`); a request from one of them is from the nearest address in ' +
      '`X-Forwarded-For` that is not one of them. Unset: the TCP peer is the client, and `X-Forwarded-For` ' +
      'is not believed',
  },
  STUDIO_AUTH_FAIL_LIMIT: {
    schema: int(1, 1_000_000),
    default: '30',
    doc: 'failed authentications per client address per rolling 60 s',
    group: 'limits',
  },
  STUDIO_QUOTA_FREE: {
    schema: quota,
    default: '100',
    doc: 'completions per calendar month (UTC), plan FREE',
    group: 'limits',
  },
  STUDIO_QUOTA_STARTER: {
    schema: quota,
    default: '5000',
    doc: 'completions per month, plan STARTER',
    group: 'limits',
  },
  STUDIO_QUOTA_PRO: {
    schema: quota,
    default: '50000',
    doc: 'completions per month, plan PRO',
    group: 'limits',
  },
  STUDIO_QUOTA_ENTERPRISE: {
    schema: quota,
    default: 'unlimited',
    doc: 'completions per month, plan ENTERPRISE',
    group: 'limits',
    manual: 'completions per month, plan ENTERPRISE (a number or `unlimited`)',
  },
  STUDIO_QUOTA_LEASE_MS: {
    schema: int(1000, 600_000),
    default: '30000',
    doc: 'quota units a process reserved come back this long after it dies (its lease, renewed every third of it)',
    group: 'limits',
  },
  STUDIO_UPSTREAM: {
    schema: upstreamList,
    default: 'anthropic',
    doc:
      'upstream adapters in fallback order: anthropic, openai (any OpenAI-compatible server), echo (built in: answers ' +
      'without a provider, to try the API or run tests; never for production), or a list',
    group: 'ai',
    manual:
      'upstream adapter: `anthropic`, `openai` (any OpenAI-compatible server) or `echo` (built in: answers ' +
      'without a provider, to try the API or run tests; see "AI completions"), or an ordered fallback list ' +
      'such as `anthropic,openai` (see "Fallback"); an unknown name, a name twice, or, in a list of two or ' +
      'more, an upstream without its `ANTHROPIC_API_KEY` / `OPENAI_BASE_URL` stops the start (a single ' +
      'upstream without it starts, and its completions answer 503 `ai_not_configured`)',
  },
  ANTHROPIC_API_KEY: {
    schema: text,
    doc: 'key for the anthropic adapter',
    group: 'ai',
  },
  ANTHROPIC_BASE_URL: {
    schema: url,
    default: 'https://api.anthropic.com',
    doc: 'base URL of the Anthropic Messages API',
    group: 'ai',
  },
  OPENAI_BASE_URL: {
    schema: url,
    doc: 'base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1',
    group: 'ai',
  },
  OPENAI_API_KEY: {
    schema: text,
    doc: 'bearer key for the openai adapter (optional for local servers)',
    group: 'ai',
  },
  STUDIO_MODEL_PRIMARY: {
    schema: text,
    doc: 'upstream model for alias primary (default per adapter)',
    group: 'ai',
    shownDefault: 'per adapter',
    manual: 'upstream model for alias `primary`',
  },
  STUDIO_MODEL_FAST: {
    schema: text,
    doc: 'upstream model for alias fast (default per adapter)',
    group: 'ai',
    shownDefault: 'per adapter',
    manual: 'upstream model for alias `fast`',
  },
  STUDIO_MODEL_ALIASES: {
    schema: modelAliases,
    doc:
      'more model aliases for the OpenAI- and Anthropic-compatible routes, each with its model on each upstream: ' +
      '`coder=anthropic:claude-sonnet-4-5,openai:gpt-4.1;mini=openai:gpt-4.1-mini`',
    group: 'ai',
    manual:
      'more model aliases for the OpenAI- and Anthropic-compatible routes, each with its model on each ' +
      'upstream of `STUDIO_UPSTREAM`: ' +
      '`coder=anthropic:claude-sonnet-4-5,openai:gpt-4.1;mini=openai:gpt-4.1-mini,anthropic:claude-haiku-4-5` ' +
      '(an alias without a model for an upstream of the list stops the start)',
  },
  STUDIO_PRICES: {
    schema: pricesFile,
    doc:
      'JSON file of upstream model prices adding to or overriding the shipped table: ' +
      '{"model": {"input", "output", "cache_read", "cache_write"}}, USD per million tokens (docs/spend.md)',
    group: 'ai',
    manual:
      'a JSON file of upstream model prices that adds to or overrides the shipped table: an object mapping a model ' +
      'as the service sends it upstream to `{"input", "output", "cache_read", "cache_write"}`, USD per million ' +
      'tokens (0 is a price, for a free or local model); a bad file stops the start with one line naming the entry ' +
      '(see "The price table")',
  },
  STUDIO_UPSTREAM_TIMEOUT_MS: {
    schema: int(1, 3_600_000),
    default: '120000',
    doc: 'give up on an upstream answer after this long (504); in a fallback list, per upstream, then the next',
    group: 'ai',
    manual:
      'give up on an upstream answer after this long (504); in a fallback list, each upstream gets this ' +
      'long, and one that has not answered in it falls over to the next',
  },
  STUDIO_SHUTDOWN_TIMEOUT_MS: {
    schema: int(0, 3_600_000),
    default: '30000',
    doc: 'on SIGTERM, how long in-flight requests may finish',
    group: 'listener',
  },
  STUDIO_REDIS_URL: {
    schema: redisUrl,
    doc: 'Redis or Valkey (redis://, rediss://) holding the rate limits shared by every process; unset → in memory',
    group: 'scaling',
    manual:
      'Redis or Valkey (`redis://`, `rediss://`) holding the rate limits shared by every process (see ' +
      '"Scaling out"); unset → each process limits in memory',
  },
  STUDIO_REDIS_TIMEOUT_MS: {
    schema: int(1, 60_000),
    default: '50',
    doc: 'a Redis call unanswered within this long falls back to the in-memory limiter',
    group: 'scaling',
    manual:
      'a Redis call unanswered within this long falls back to the in-memory limiter for the requests it ' +
      'was deciding',
  },
  STUDIO_REDIS_PREFIX: {
    schema: text,
    default: 'studio:rl:',
    doc: 'prefix of every Redis key the service writes',
    group: 'scaling',
  },
  STUDIO_WORKERS: {
    schema: workers,
    default: '1',
    doc: 'processes serving one port (node:cluster); auto = one per core; above 1 needs STUDIO_REDIS_URL, DATABASE_URL',
    group: 'scaling',
    manual:
      'processes serving one port (`node:cluster`); `auto` = one per core; above 1 needs ' +
      '`STUDIO_REDIS_URL` and `DATABASE_URL` (see "Scaling out")',
  },
  STUDIO_DASHBOARD: {
    schema: v.picklist(['on', 'off']),
    default: 'on',
    doc: 'the dashboard at /dashboard on the API listener: on, or off for API-only deployments',
    group: 'dashboard',
    manual: 'the dashboard at `/dashboard` on the API listener (`/` redirects there); `off` for API-only deployments',
  },
  STUDIO_PUBLIC_URL: {
    schema: url,
    doc: 'base of every link the service prints (sign-in links); unset → http://HOST:PORT',
    group: 'dashboard',
    shownDefault: 'http://HOST:PORT',
    manual:
      'base of every link the service prints (sign-in links); an `https://` URL makes the session cookie ' +
      '`Secure` and `__Host-`',
  },
  STUDIO_WEBHOOKS_ALLOW_PRIVATE: {
    schema: v.pipe(
      v.picklist(['true', 'false'], 'must be true or false'),
      v.transform((s) => s === 'true')
    ),
    default: 'false',
    doc: 'true lets webhook endpoints be http:// and on loopback, private or link-local addresses (own network)',
    group: 'events',
    manual:
      '`true` lets webhook endpoints use `http://` and loopback, private or link-local addresses ' +
      '(receivers on your own network; see "Events")',
  },
  STUDIO_WEBHOOKS_TIMEOUT_MS: {
    schema: int(100, 600_000),
    default: '15000',
    doc: 'a webhook endpoint must answer 2xx within this long, else the delivery is retried',
    group: 'events',
  },
  STUDIO_CAPTCHA_VERIFY_URL: {
    schema: url,
    doc: "URL every CAPTCHA token is verified at instead of its provider's siteverify (tests, air-gapped installs)",
    group: 'events',
    shownDefault: "each provider's own siteverify",
    manual:
      'URL that every CAPTCHA token of a lead key (see docs/forms.md, "CAPTCHA") is posted to instead of its ' +
      "provider's siteverify (Turnstile's, hCaptcha's or reCAPTCHA's): a local stand-in for tests or an " +
      'air-gapped install. It gets the same form-encoded `secret`, `response` and `remoteip`',
  },
  STUDIO_AUTOREPLY_DAILY_LIMIT: {
    schema: int(0, 1e6),
    default: '200',
    doc: 'autoresponder mails per lead key per day (UTC)',
    group: 'events',
    manual:
      'autoresponder mails (see docs/forms.md, "Autoresponder") a lead key sends in a day (UTC); past it, a lead ' +
      "gets none and the mail log says so. With one per address per 24 hours, it keeps a key's form from being a " +
      'mail relay',
  },
  STUDIO_AUDIT_RETENTION_DAYS: {
    schema: int(1, 36_500),
    default: '400',
    doc: 'audit log entries older than this many days are deleted (hourly)',
    group: 'dashboard',
    manual: 'audit log entries older than this many days are deleted, hourly, by the delivery worker (see "Audit log")',
  },
  STUDIO_SMTP_URL: {
    schema: smtpUrl,
    doc: 'SMTP server that sends mail (smtp://user:pass@host:587, smtps://…:465); with STUDIO_MAIL_FROM: mail on',
    group: 'events',
    manual:
      'SMTP server that sends mail: `smtp://user:pass@host:587` (STARTTLS when the server offers it) or ' +
      '`smtps://user:pass@host:465` (TLS from the start); with `STUDIO_MAIL_FROM` it turns mail on (see ' +
      '"Mail"). Unset → no mail is sent and nothing else changes',
  },
  STUDIO_MAIL_FROM: {
    schema: mailFrom,
    doc: 'sender of every mail (a@example.com or Studio <a@example.com>); needs STUDIO_SMTP_URL',
    group: 'events',
    manual:
      'the sender of every mail: `studio@example.com` or `Studio <studio@example.com>`; set it with ' +
      '`STUDIO_SMTP_URL` (one without the other is refused at start)',
  },
  STUDIO_METRICS_PORT: {
    schema: port,
    doc: 'port of the Prometheus /metrics listener; unset → off',
    group: 'operations',
  },
  STUDIO_METRICS_HOST: {
    schema: text,
    default: '127.0.0.1',
    doc: 'address of the /metrics listener',
    group: 'operations',
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    schema: url,
    doc: 'OpenTelemetry collector (OTLP/HTTP) the traces go to, at <endpoint>/v1/traces; unset → no tracing',
    group: 'operations',
    manual:
      'OpenTelemetry collector (OTLP/HTTP) the traces go to, at `<endpoint>/v1/traces`; unset → no ' +
      'tracing, and nothing of OpenTelemetry is loaded (see "Tracing")',
  },
  OTEL_EXPORTER_OTLP_HEADERS: {
    schema: otlpHeaders,
    doc: 'headers sent with the traces, name=value pairs separated by commas (e.g. an API key)',
    group: 'operations',
    manual:
      'headers sent with the traces: `name=value` pairs separated by commas, values percent-encoded (e.g. ' +
      '`x-api-key=…`); never printed',
  },
  OTEL_SERVICE_NAME: {
    schema: text,
    default: 'studio-api',
    doc: 'service.name of the traces',
    group: 'operations',
    manual: "the traces' `service.name`",
  },
} satisfies Record<string, Setting>

type Settings = typeof settings
type Name = keyof Settings
export type Config = {
  [K in Name]: Settings[K] extends { default: string }
    ? v.InferOutput<Settings[K]['schema']>
    : v.InferOutput<Settings[K]['schema']> | undefined
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string
  ) {
    super(`${variable}: ${reason}`)
  }
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  const out: Record<string, unknown> = {}
  for (const [name, setting] of Object.entries(settings) as [Name, Setting][]) {
    const raw = env[name] === '' ? undefined : env[name]
    const value = raw ?? setting.default
    if (value === undefined) continue
    const result = v.safeParse(setting.schema, value)
    if (!result.success) {
      const shown = /KEY|DATABASE_URL|REDIS_URL|SMTP_URL|HEADERS/.test(name) ? '' : ` (got ${JSON.stringify(raw)})`
      throw new ConfigError(name, result.issues[0].message + shown)
    }
    out[name] = result.output
  }
  const config = out as Config
  if (config.STUDIO_SMTP_URL && !config.STUDIO_MAIL_FROM)
    throw new ConfigError('STUDIO_MAIL_FROM', 'must be set when STUDIO_SMTP_URL is (the sender of every mail)')
  if (config.STUDIO_MAIL_FROM && !config.STUDIO_SMTP_URL)
    throw new ConfigError('STUDIO_SMTP_URL', 'must be set when STUDIO_MAIL_FROM is (the server mail is sent through)')
  const missing = missingUpstream(config) ?? aliasWithoutModel(config) ?? backupConflict(config)
  if (missing) throw new ConfigError(...missing)
  return config
}

// Mail is on when both STUDIO_SMTP_URL and STUDIO_MAIL_FROM are set (parseConfig refuses one without the other).
export const mailIsOn = (config: Pick<Config, 'STUDIO_SMTP_URL'>) => config.STUDIO_SMTP_URL !== undefined
