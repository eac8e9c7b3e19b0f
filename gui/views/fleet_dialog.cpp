#include "views/fleet_dialog.h"

#include "core/error.h"

#include <QDateTime>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <exception>

namespace lockscope::gui {

FleetDialog::FleetDialog(QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Compare Fleet from Prometheus"));
    url_ = new QLineEdit(this);
    url_->setPlaceholderText(QStringLiteral("http://prometheus:9090"));
    url_->setToolTip(tr("--prometheus: the query API of Prometheus, Thanos or Mimir (its Prometheus prefix)"));
    selectors_ = new QRadioButton(tr("Two &selectors on lockscope_build_info"), this);
    by_label_ = new QRadioButton(tr("The two lar&gest groups by a label"), this);
    selectors_->setChecked(true);
    a_ = new QLineEdit(this);
    a_->setPlaceholderText(QStringLiteral("kernel=\"6.1.0-47-amd64\""));
    b_ = new QLineEdit(this);
    b_->setPlaceholderText(QStringLiteral("kernel=\"6.1.0-57-amd64\""));
    a_->setToolTip(tr("--a: label matchers on lockscope_build_info; each matching host is a sample"));
    b_->setToolTip(tr("--b: label matchers on lockscope_build_info"));
    by_ = new QLineEdit(this);
    by_->setPlaceholderText(QStringLiteral("kernel"));
    by_->setToolTip(tr("--by: the two largest groups by this build-info label, the lower value as A"));
    window_ = new QLineEdit(QStringLiteral("1h"), this);
    window_->setToolTip(tr("--window: the range compared (90s, 30m, 1h, 1d, 1w)"));
    end_ = new QLineEdit(QStringLiteral("now"), this);
    end_->setToolTip(tr("--end: when the window ends (now, Unix seconds, 2026-12-01T14:00:00Z)"));
    top_ = new QSpinBox(this);
    top_->setRange(1, 1000);
    top_->setValue(20);
    top_->setToolTip(tr("--top: locks compared one by one, by wait; the rest are summed"));
    error_ = new QLabel(this);
    error_->setWordWrap(true);
    error_->setStyleSheet(QStringLiteral("color: #c62828;"));
    error_->hide();

    auto* form = new QFormLayout;
    form->addRow(tr("Prometheus &URL:"), url_);
    form->addRow(selectors_);
    form->addRow(tr("Group &A (baseline):"), a_);
    form->addRow(tr("Group &B:"), b_);
    form->addRow(by_label_);
    form->addRow(tr("&Label:"), by_);
    form->addRow(tr("&Window:"), window_);
    form->addRow(tr("&Ending:"), end_);
    form->addRow(tr("Locks one by &one:"), top_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Co&mpare"));
    connect(buttons, &QDialogButtonBox::accepted, this, &FleetDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &FleetDialog::reject);
    connect(selectors_, &QRadioButton::toggled, this, &FleetDialog::updateMode);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(error_);
    layout->addWidget(buttons);
    updateMode();
    resize(560, sizeHint().height());
}

void FleetDialog::updateMode()
{
    const bool selectors = selectors_->isChecked();
    a_->setEnabled(selectors);
    b_->setEnabled(selectors);
    by_->setEnabled(!selectors);
}

void FleetDialog::setRequest(const fleet::FleetRequest& r)
{
    url_->setText(QString::fromStdString(r.url));
    a_->setText(QString::fromStdString(r.a));
    b_->setText(QString::fromStdString(r.b));
    by_->setText(QString::fromStdString(r.by));
    (r.by.empty() ? selectors_ : by_label_)->setChecked(true);
    window_->setText(QString::fromStdString(r.window));
    end_->setText(QString::fromStdString(r.end));
    top_->setValue(int(r.top));
    updateMode();
}

fleet::FleetRequest FleetDialog::request() const
{
    fleet::FleetRequest r;
    r.url = url_->text().trimmed().toStdString();
    if (selectors_->isChecked()) {
        r.a = a_->text().trimmed().toStdString();
        r.b = b_->text().trimmed().toStdString();
    } else {
        r.by = by_->text().trimmed().toStdString();
    }
    r.window = window_->text().trimmed().toStdString();
    r.end = end_->text().trimmed().toStdString();
    r.top = size_t(top_->value());
    return r;
}

void FleetDialog::accept()
{
    // The same checks, in the same words, as the command line's; the
    // server and the selectors' matches are the diff page's to report.
    try {
        const fleet::FleetRequest r = request();
        if (r.url.empty())
            throw UsageError("give the Prometheus server's URL, e.g. http://prometheus:9090");
        fleet::fleet_options(r, double(QDateTime::currentSecsSinceEpoch()));
    } catch (const std::exception& e) {
        error_->setText(QString::fromStdString(e.what()));
        error_->show();
        return;
    }
    QDialog::accept();
}

}  // namespace lockscope::gui
