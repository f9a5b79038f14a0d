// Starts Swagger UI on this service's own document (no inline script: the
// page's Content-Security-Policy allows scripts from this origin only).
window.addEventListener('DOMContentLoaded', () => {
  window.ui = window.SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    tryItOutEnabled: false,
  });
});
