// A real OpenID provider for Gatehouse's integration tests and examples/oidc:
// panva's oidc-provider with one confidential client and one test account.
// Everything is configured from the environment; it listens on 127.0.0.1 only.
//
//   PORT                       port to listen on (required)
//   ISSUER                     default http://127.0.0.1:$PORT
//   CLIENT_ID, CLIENT_SECRET   default gatehouse / gatehouse-test-client-secret-7f3a9c
//   REDIRECT_URIS              space-separated redirect URIs (required)
//   POST_LOGOUT_REDIRECT_URIS  space-separated post-logout redirect URIs
//   ACCESS_TOKEN_TTL, ID_TOKEN_TTL  seconds, default 3600 (short ones for refresh tests)
//
// The dev login form accepts any login and password; the account id is the login and
// its email claim is "<login>@example.test".
import Provider from 'oidc-provider';

const port = Number(process.env.PORT);
if (!port) {
  console.error('provider.js: set PORT');
  process.exit(2);
}
const issuer = process.env.ISSUER || `http://127.0.0.1:${port}`;
const list = (v) => (v || '').split(/\s+/).filter(Boolean);
const ttl = (v, d) => Number(v) || d;

const configuration = {
  clients: [{
    client_id: process.env.CLIENT_ID || 'gatehouse',
    client_secret: process.env.CLIENT_SECRET || 'gatehouse-test-client-secret-7f3a9c',
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: list(process.env.REDIRECT_URIS),
    post_logout_redirect_uris: list(process.env.POST_LOGOUT_REDIRECT_URIS),
  }],
  pkce: { required: () => true },
  scopes: ['openid', 'email', 'offline_access'],
  claims: { openid: ['sub'], email: ['email', 'email_verified'] },
  // Put the email claim in the ID token of the code flow, where the step reads it.
  conformIdTokenClaims: false,
  // A refresh token for every login of a client allowed the grant, not only offline_access.
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  features: {
    devInteractions: { enabled: true },
    revocation: { enabled: true },
    rpInitiatedLogout: { enabled: true },
  },
  ttl: {
    AccessToken: ttl(process.env.ACCESS_TOKEN_TTL, 3600),
    IdToken: ttl(process.env.ID_TOKEN_TTL, 3600),
    AuthorizationCode: 60,
    Interaction: 600,
    Session: 3600,
    Grant: 3600,
    RefreshToken: 86400,
  },
  cookies: { keys: ['gatehouse-test-provider-cookie-key'] },
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: id, email: `${id}@example.test`, email_verified: true };
      },
    };
  },
};

const provider = new Provider(issuer, configuration);
provider.on('server_error', (ctx, err) => console.error('server_error', err));
const server = provider.listen(port, '127.0.0.1', () => {
  console.log(`oidc-provider listening on ${issuer}`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
