// GetStream's server SDK making the calls keel makes, against the fake:
//   node getstream.mjs <base URL> <api key> <api secret>
// upsert the broadcaster, get-or-create the livestream call, get it, go
// live with HLS, stop live, get-or-create its chat channel; then prints a
// broadcaster token and checks a webhook signature the way the SDK does.
import { StreamClient } from '@stream-io/node-sdk';

const [baseUrl, key, secret, signedBody, signature] = process.argv.slice(2);
const client = new StreamClient(key, secret, { basePath: baseUrl, timeout: 5000 });
await client.upsertUsers([{ id: 'channel-owner', role: 'user', name: 'The channel' }]);
const call = client.video.call('livestream', 'channel');
await call.getOrCreate({ data: { created_by_id: 'channel-owner', custom: { keel: true } } });
await call.get();
await call.goLive({ start_hls: true });
await call.stopLive({});
await client.chat.channel('livestream', 'channel').getOrCreate({ data: { created_by_id: 'channel-owner' } });
const out = {
  // The RTMP stream key is a user token that does not expire.
  streamKey: client.generatePermanentUserToken({ user_id: 'channel-owner' }),
  signatureValid: signedBody ? client.verifyWebhook(signedBody, signature) : null,
};
console.log(JSON.stringify(out));
