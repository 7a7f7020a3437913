/** The route fuzz on the server backend (see fuzz-routes.ts). */
import { fuzzRoutesSuite } from './fuzz-routes.js';

fuzzRoutesSuite('server');
