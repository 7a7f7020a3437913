/** `logkeep tail` through 200 cut connections and two restarts, against the server backend (see cli-commands.ts). */
import { cliSuite } from './cli-commands.js';

cliSuite('server', 'tail');
