import { Command } from 'commander';
import { CliError } from './output';
import type * as AdminCommands from './commands/admin';
import type * as ApiCommand from './commands/api';
import type * as CrashCommands from './commands/crashes';
import type * as CrdsCommand from './commands/crds';
import type * as DevCommand from './commands/dev';
import type * as EconomyCommands from './commands/economy';
import type * as GetCommands from './commands/get';
import type * as LicenceCommands from './commands/licence';
import type * as OperatorCommand from './commands/operator';
import type * as RealtimeCommand from './commands/realtime';
import type * as SupportCommands from './commands/support';
import { DEFAULT_STEAM_ID, runDevStoreAction, runDevStoreOrders, runDevStoreTicket } from './dev/store-commands';
import rootPackage from '../../../package.json';

/**
 * Each command's code, loaded when the command runs rather than when `hearth` starts: `hearth get`
 * loads neither the HTTP server, the socket, the operator, the crash worker nor `hearth dev`, nor
 * their packages (`hearth dev store …` is small and stays). A plain `require`, so the bundle (apps/cli/build.ts)
 * starts each module lazily too.
 */
const commands = {
  admin: () => require('./commands/admin') as typeof AdminCommands,
  api: () => require('./commands/api') as typeof ApiCommand,
  crashes: () => require('./commands/crashes') as typeof CrashCommands,
  crds: () => require('./commands/crds') as typeof CrdsCommand,
  dev: () => require('./commands/dev') as typeof DevCommand,
  economy: () => require('./commands/economy') as typeof EconomyCommands,
  get: () => require('./commands/get') as typeof GetCommands,
  licence: () => require('./commands/licence') as typeof LicenceCommands,
  operator: () => require('./commands/operator') as typeof OperatorCommand,
  realtime: () => require('./commands/realtime') as typeof RealtimeCommand,
  support: () => require('./commands/support') as typeof SupportCommands,
};

/** An action that loads `name` from its command's module when it runs (`commands`), with commander's arguments. */
function later<M, K extends keyof M>(load: () => M, name: K): M[K] {
  return ((...args: unknown[]) => (load()[name] as (...given: unknown[]) => unknown)(...args)) as M[K];
}

/** A repeatable option's values, in the order given (`--product a --product b`). */
function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** A command about one environment names it by its app key. */
const inEnvironment = (command: Command) => command.requiredOption('--environment <appKey>', "the environment's app key");
/** A command about one project (an organisation: its licence) names it, in its namespace. */
const ofProject = (command: Command) =>
  command.requiredOption('--project <name>', 'the project (the organisation)').option('--namespace <namespace>', "the project's namespace", 'default');

/** What a command runs with its options (commander's action). */
type CommandAction = Parameters<Command['action']>[0];

/**
 * `<keys> create | list | revoke`: the commands of a kind of key (an environment's server keys, a
 * project's licence keys). Each kind names its owner (`--environment`, `--project`), its words and
 * what runs; `create` may take options of its own after `--name`.
 */
function keyCommands(
  keys: Command,
  kind: {
    owner: (command: Command) => Command;
    aKey: string;
    prefix: string;
    create: string;
    list: string;
    createOptions?: (create: Command) => Command;
    run: { create: CommandAction; list: CommandAction; revoke: (opts: { keyId: string; json?: boolean }) => Promise<void> };
  },
): void {
  const create = kind.owner(keys.command('create').description(kind.create)).requiredOption('--name <name>', 'what the key is for');
  (kind.createOptions?.(create) ?? create).option('--json', 'print JSON').action(kind.run.create);
  kind.owner(keys.command('list').description(kind.list)).option('--json', 'print JSON').action(kind.run.list);
  keys
    .command('revoke')
    .description(`revoke ${kind.aKey}; every API process stops accepting it`)
    .argument('<keyId>', `the key id (the part after ${kind.prefix})`)
    .option('--json', 'print JSON')
    .action((keyId, opts) => kind.run.revoke({ keyId, ...opts }));
}

/** Every command of `hearth`, each with a description (`hearth --help`, `hearth <command> --help`). */
export function buildProgram(): Command {
  const program = new Command('hearth')
    .description('Hearth: a Kubernetes-native backend for games')
    .version(rootPackage.version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print what a command does and takes');

  program.command('api').description('serve the HTTP API (PORT, METRICS_PORT)').action(later(commands.api, 'runApi'));
  program.command('realtime').description('serve the sessions socket (REALTIME_PORT, METRICS_PORT)').action(later(commands.realtime, 'runRealtime'));
  program
    .command('operator')
    .description('reconcile the hearth.gg custom resources into the database (KUBECONFIG or in-cluster, DATABASE_URL, REDIS_URL, METRICS_PORT)')
    .action(later(commands.operator, 'runOperator'));
  program.command('migrate').description('apply database migrations').option('--json', 'print JSON').action(later(commands.admin, 'runMigrate'));
  program
    .command('apply')
    .description('apply Hearth manifests (a YAML file or a folder of them) to the database')
    .requiredOption('-f, --file <fileOrDir>', 'a YAML file or folder')
    .option('--json', 'print JSON')
    .action(later(commands.admin, 'runApply'));
  program
    .command('get')
    .description("list the applied documents of a kind, or one, as kubectl get does (the kind's CRD columns, or -o json|yaml manifests)")
    .argument('<kind>', 'a kind, its plural, singular or short name (cardtypes, CardType)')
    .argument('[name]', 'only this document')
    .option('-n, --namespace <namespace>', 'the namespace', 'default')
    .option('-A, --all-namespaces', 'every namespace')
    .option('-o, --output <format>', 'json, yaml, or wide (more columns)')
    .option('--json', 'print JSON (-o json)')
    .action((kind, name, opts) => commands.get().runGet(kind, name, opts));
  program
    .command('describe')
    .description('an applied document: its spec, its status (Ready, reason, generation), what it names and what names it')
    .argument('<kind>', 'a kind, its plural, singular or short name')
    .argument('<name>', 'the document')
    .option('-n, --namespace <namespace>', 'the namespace', 'default')
    .action((kind, name, opts) => commands.get().runDescribe(kind, name, opts));

  const keys = program.command('keys').description("an environment's server keys: mint, list, revoke");
  keyCommands(keys, {
    owner: inEnvironment,
    aKey: 'a key',
    prefix: 'hsk_',
    create: 'mint a server key for an environment; the whole key is printed this once',
    list: "list an environment's keys: id, name, a hint of the secret, creation, last use, revocation",
    run: { create: later(commands.admin, 'runKeysCreate'), list: later(commands.admin, 'runKeysList'), revoke: later(commands.admin, 'runKeysRevoke') },
  });

  const licenceKeys = program.command('licence-keys').description("an organisation's (a project's) licence keys for client plugins: mint, list, revoke");
  keyCommands(licenceKeys, {
    owner: ofProject,
    aKey: 'a licence key',
    prefix: 'hlk_',
    create: 'mint a licence key for a project; the whole key is printed this once',
    list: "list a project's licence keys: id, name, the products each covers, a hint of the secret, creation, last use, revocation",
    createOptions: (create) =>
      create.option('--product <product>', 'a product the key covers (repeat for several; at least one): a plugin activates only for these', collect),
    run: {
      create: later(commands.licence, 'runLicenceKeysCreate'),
      list: later(commands.licence, 'runLicenceKeysList'),
      revoke: later(commands.licence, 'runLicenceKeysRevoke'),
    },
  });

  const licence = program.command('licence').description("the seats of a project's licence for client plugins: list, release");
  ofProject(licence.command('seats').description("the machines holding seats of the project's licence, oldest first, and how many its plan gives"))
    .option('--json', 'print JSON')
    .action(later(commands.licence, 'runLicenceSeats'));
  ofProject(
    licence.command('release').description('free the seat a machine holds (one lost before its plugin released it); a machine without one changes nothing'),
  )
    .requiredOption('--machine <id>', 'the machine id its plugin activated with')
    .option('--json', 'print JSON')
    .action(later(commands.licence, 'runLicenceRelease'));

  const support = program.command('support').description("players' support requests and reports: list");
  inEnvironment(support.command('list').description("list an environment's filings, newest first"))
    .option('--kind <kind>', 'requests or reports (default: both)')
    .option('--limit <n>', 'at most this many, 1-1000', '100')
    .option('--json', 'print JSON')
    .action(later(commands.support, 'runSupportList'));

  const economy = program.command('economy').description("players' balances and ledger; corrections as ledger entries");
  inEnvironment(economy.command('ledger').description("a player's inventories, balances and newest ledger entries"))
    .requiredOption('--player <id>', 'the player id')
    .option('--currency <key>', 'only this currency')
    .option('--limit <n>', 'at most this many entries, 1-200', '50')
    .option('--json', 'print JSON')
    .action(later(commands.economy, 'runEconomyLedger'));
  for (const kind of ['credit', 'debit'] as const) {
    inEnvironment(economy.command(kind).description(`${kind} a player's currency: a ledger entry with a reason, idempotent under its key`))
      .requiredOption('--player <id>', 'the player id')
      .requiredOption('--currency <key>', 'the currency key')
      .requiredOption('--amount <n>', 'a whole number 1 to 1000000000')
      .requiredOption('--reason <key>', 'a key naming why (e.g. support.correction)')
      .option('--reference <text>', 'what it is about (a ticket number), 1-200 characters')
      .option('--realm <id>', "a realm id, or `account` (default: the currency's scope)")
      .option('--idempotency-key <key>', 'retry a correction safely under this key (default: a new one, printed)')
      .option('--json', 'print JSON')
      .action((opts) => commands.economy().runEconomyMove(kind, opts));
  }

  program
    .command('crash-worker')
    .description('work the crash-upload queue: parse, store and group crash reports (DATABASE_URL, OBJECT_STORAGE_URL, METRICS_PORT, CRASH_WORKER_CONCURRENCY)')
    .action(later(commands.crashes, 'runCrashWorker'));
  const crashes = program.command('crashes').description("an environment's crash reports, grouped into issues");
  inEnvironment(crashes.command('list').description('issues, most recently seen first: counts, first and last seen, versions; uploads by state'))
    .option('--limit <n>', 'at most this many issues, 1-200', '50')
    .option('--json', 'print JSON')
    .action(later(commands.crashes, 'runCrashesList'));
  inEnvironment(
    crashes
      .command('show')
      .description('one crash: its fields and the keys of its files (with --issue: one issue and its newest crashes)')
      .argument('<id>', 'a crash id (or with --issue an issue number)'),
  )
    .option('--issue', 'the id is an issue number')
    .option('--limit <n>', 'with --issue: at most this many crashes, 1-200', '20')
    .option('--json', 'print JSON')
    .action((id, opts) => commands.crashes().runCrashesShow(id, opts));

  program
    .command('crds')
    .description("print the CRDs of every Hearth kind as YAML (for kubectl apply -f -), or with --chart write the chart's CRD templates")
    .option('--chart <dir>', 'write the CRD templates of this chart (charts/hearth)')
    .option('--json', 'print JSON (with --chart)')
    .action(later(commands.crds, 'runCrds'));

  program
    .command('signing-keys')
    .description('token signing keys: rotate')
    .command('rotate')
    .description('make a new signing key; the old one stays published until its tokens expire')
    .option('--key-set <set>', 'player (player tokens) or licence (licence tokens)', 'player')
    .option('--json', 'print JSON')
    .action(later(commands.admin, 'runSigningKeysRotate'));

  const dev = program
    .command('dev')
    .description('everything in one process on the embedded default (embedded PostgreSQL, no Redis needed), with a local store and OpenID Connect provider')
    .option('--data-dir <dir>', 'where the embedded database and local secrets live', '.hearth')
    .action(later(commands.dev, 'runDev'));
  RUNS_ITSELF.add(dev);
  // Their folder is `hearth dev`'s own --data-dir (given before or after the subcommand), shown in their help.
  const devStore = dev
    .command('store')
    .description("the player's and the store's side of the local store of a running `hearth dev`: tickets, orders, the overlay, refunds")
    .configureHelp({ showGlobalOptions: true });
  const withDataDir = <T extends object>(command: Command, run: (opts: T & { dataDir: string; json?: boolean }) => Promise<void>) =>
    command
      .option('--json', 'print JSON')
      .configureHelp({ showGlobalOptions: true })
      .action(async (...args: unknown[]) => {
        const self = args[args.length - 1] as Command;
        await run(self.optsWithGlobals<T & { dataDir: string; json?: boolean }>());
      });
  withDataDir<{ steamId: string }>(
    devStore
      .command('ticket')
      .description(
        'a ticket of a store account for the demo game, as the game client gets one (GetAuthTicketForWebApi): what POST /commerce/store/identify takes',
      )
      .option('--steam-id <id>', 'the store account id (decimal digits)', DEFAULT_STEAM_ID),
    runDevStoreTicket,
  );
  withDataDir(devStore.command('orders').description('the orders the local store holds, with their status at the store'), runDevStoreOrders);
  const actions = {
    approve: 'the player approves the order in the store overlay',
    decline: 'the player declines the order in the store overlay',
    refund: "the store refunds a settled order (its support's refund)",
    chargeback: "the player's bank charges a settled order back",
  } as const;
  for (const [action, description] of Object.entries(actions) as [keyof typeof actions, string][]) {
    const command = devStore
      .command(action)
      .description(`${description}; answers once hearth dev has read the store's report`)
      .argument('<storeOrderId>', "the order's storeOrderId");
    withDataDir(command, (opts) => runDevStoreAction(action, String(command.processedArgs[0]), opts));
  }
  oneLineFailures(program);
  return program;
}

/** Commands that have commands of their own and also run themselves (`hearth dev` serves; `hearth dev store …` talks to it). */
const RUNS_ITSELF = new WeakSet<Command>();

/** A group: a command that only holds commands (`hearth keys`), not one that also runs itself (`hearth dev`). */
export function isGroup(command: Command): boolean {
  return command.commands.length > 0 && !RUNS_ITSELF.has(command);
}

/** `hearth keys create`: a command's whole name, as a person types it. */
function nameOf(command: Command): string {
  return command.parent ? `${nameOf(command.parent)} ${command.name()}` : command.name();
}

/**
 * Every failure is one line on stderr and exit 1 (docs/cli.md), commander's own too: a missing
 * required option, an unknown option or command, a missing argument say so in one line pointing at
 * the command's --help (commander would print the whole help after the error), and a group named
 * without one of its commands (`hearth keys`) says which it has instead of printing its help.
 */
function oneLineFailures(command: Command): void {
  const help = `${nameOf(command)} --help`;
  command.configureOutput({
    outputError: (text, write) =>
      write(
        `hearth: ${text
          .trim()
          .replace(/^error: /, '')
          .replace(/\s*\n\s*/g, ' ')} (${help} shows what it takes)\n`,
      ),
  });
  if (isGroup(command)) {
    const names = command.commands.map((sub) => sub.name()).join(', ');
    // The action answers only where no command of the group was named; `hearth help <command>` stays.
    command
      .helpCommand(true)
      .allowExcessArguments()
      .action(() => {
        const [asked] = command.args;
        throw new CliError(
          asked === undefined
            ? `name a command of ${nameOf(command)}: ${names} (${help})`
            : `unknown command '${asked}' of ${nameOf(command)}; its commands: ${names} (${help})`,
        );
      });
  }
  for (const sub of command.commands) oneLineFailures(sub);
}
