/** The client commands' data part against the server backend (see cli-commands.ts). */
import { cliSuite } from './cli-commands.js';

cliSuite('server', 'data');
